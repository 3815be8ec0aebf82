/*
 * test_generator.c - the catalogue and expander: deterministic output, files
 * left untouched when unchanged, every op x dtype x variant present in the
 * manifest and the kernel table, and template errors that name the problem.
 * Runs from the repository root (ninja test does).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kg_ew_table.h"
#include "kg_table.h"
#include "kg_test.h"

static void need_lua(void)
{
    if (system("command -v lua5.4 >/dev/null 2>&1") != 0)
        cr_skip_test("lua5.4 is not installed on this machine (the generator runs at build time only)");
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Every file one run wrote, compared with a second run and with the build's
   generated/ (build.ninja names its own output directory, and ninja consumes
   the build's copy). */
Test(generator, output_is_deterministic_and_matches_the_build)
{
    need_lua();
    char tmpl[] = "/tmp/kg_gen_XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char cmd[512];
    for (int run = 0; run < 2; run++) {
        snprintf(cmd, sizeof cmd, "mkdir -p %s/r%d && lua5.4 gen/expand.lua %s/r%d", tmpl, run, tmpl, run);
        cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    }
    char dir0[256];
    snprintf(dir0, sizeof dir0, "%s/r0", tmpl);
    DIR *d = opendir(dir0);
    cr_assert_not_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "build.ninja") == 0)
            continue;
        char p0[512], p1[512], pb[512];
        snprintf(p0, sizeof p0, "%s/r0/%s", tmpl, e->d_name);
        snprintf(p1, sizeof p1, "%s/r1/%s", tmpl, e->d_name);
        snprintf(pb, sizeof pb, "generated/%s", e->d_name);
        size_t n0, n1, nb;
        char *a = slurp(p0, &n0), *b = slurp(p1, &n1), *c = slurp(pb, &nb);
        cr_assert(a && b && c, "missing %s", e->d_name);
        cr_assert(n0 == n1 && memcmp(a, b, n0) == 0, "%s differs between two runs", e->d_name);
        cr_assert(n0 == nb && memcmp(a, c, n0) == 0, "%s differs from generated/%s", p0, e->d_name);
        free(a);
        free(b);
        free(c);
        files++;
    }
    closedir(d);
    cr_assert_geq(files, 18, "only %d generated files", files);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    cr_assert_eq(system(cmd), 0);
}

Test(generator, unchanged_files_are_not_rewritten)
{
    need_lua();
    char tmpl[] = "/tmp/kg_gen_XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char cmd[512], path[256];
    snprintf(cmd, sizeof cmd, "lua5.4 gen/expand.lua %s", tmpl);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/ew_f32.cu", tmpl);
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    snprintf(cmd, sizeof cmd, "touch -d '2001-01-01' %s && lua5.4 gen/expand.lua %s", path, tmpl);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(stat(path, &after), 0);
    cr_assert_lt(after.st_mtime, before.st_mtime, "ew_f32.cu was rewritten although unchanged");
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
    cr_assert_eq(system(cmd), 0);
}

Test(generator, template_errors_name_the_problem)
{
    need_lua();
    const char *script = "lua5.4 -e 'package.path=\"gen/?.lua;\"..package.path; local t=require(\"template\");"
                         " local ok, e = pcall(t.compile(\"line\\n$(nope)\\n\", \"x.tpl\"), {});"
                         " assert(not ok and e:find(\"x.tpl:2\") and e:find(\"undefined name .nope.\"), e);"
                         " ok, e = pcall(t.compile(\"$(v)\\n\", \"y.tpl\"), {v = false});"
                         " assert(ok);"
                         " ok, e = pcall(t.compile(\"@for i = 1, 2 do\\n$(i),\\n@end\\n\", \"z.tpl\"), {});"
                         " assert(ok and e == \"1,\\n2,\\n\", e)'";
    cr_assert_eq(system(script), 0, "template engine check failed");
}

static const char *const variants[] = {"dense", "nd32", "nd32v", "nd64", "tile", "perm", "permf", "rows"};

/* Every op x accepted dtype (x output dtype for cast) x variant is in the
   table, and its kernel carries the expected name; nothing else is. */
Test(generator, every_combination_is_in_the_table_and_manifest)
{
    size_t mlen;
    char *manifest = slurp("generated/manifest.txt", &mlen);
    cr_assert_not_null(manifest, "generated/manifest.txt is missing");
    cr_assert_eq(KG_EW_VARIANT_COUNT, 8);
    int expected = 0;
    for (int op = KG_OP_NONE + 1; op < KG_OP_COUNT; op++) {
        const kg_op_info *info = kg_op_get_info((kg_op)op);
        cr_assert_not_null(info);
        for (int d = 0; d < KG_DTYPE_COUNT; d++) {
            for (int od = 0; od < KG_DTYPE_COUNT; od++) {
                int want = (info->dtype_mask >> d) & 1;
                if (info->out_rule == KG_OUT_SAME)
                    want = want && od == d;
                else if (info->out_rule == KG_OUT_BOOL)
                    want = want && od == KG_BOOL;
                for (int v = 0; v < KG_EW_VARIANT_COUNT; v++) {
                    int k = kg_ew_table[op][d][od][v];
                    if (!want) {
                        /* unlisted entries stay 0 and are never reached: dispatch checks the rule first */
                        cr_assert_eq(k, 0, "%s %s->%s has a kernel it should not", info->name, kg_dtype_name(d),
                                     kg_dtype_name(od));
                        continue;
                    }
                    expected++;
                    char name[96];
                    if (info->out_rule == KG_OUT_ANY)
                        snprintf(name, sizeof name, "kg_%s_%s_%s_%s", info->name, kg_dtype_name(d), kg_dtype_name(od),
                                 variants[v]);
                    else
                        snprintf(name, sizeof name, "kg_%s_%s_%s", info->name, kg_dtype_name(d), variants[v]);
                    cr_assert(k >= 0 && k < KG_KERNEL_COUNT, "%s missing from the table", name);
                    cr_assert_str_eq(kg_kernels[k].name, name);
                    char line[100];
                    snprintf(line, sizeof line, "\n%s ", name);
                    cr_assert_not_null(strstr(manifest, line), "%s missing from the manifest", name);
                }
                /* tperm (own table, index + 1): named like the dense kernel with _tperm */
                const int kt = kg_ew_tperm_table[op][d][od] - 1, kd = kg_ew_table[op][d][od][0];
                if (kt >= 0) {
                    char tn[96];
                    cr_assert(want && kt < KG_KERNEL_COUNT);
                    snprintf(tn, sizeof tn, "%.*s_tperm", (int)strlen(kg_kernels[kd].name) - 6, kg_kernels[kd].name);
                    cr_assert_str_eq(kg_kernels[kt].name, tn);
                    expected++;
                    if (info->arity == 1 && kg_dtype_size((kg_dtype)d) <= 2 && kg_dtype_size((kg_dtype)od) <= 2) {
                        /* ops of one input, elements of at most 2 bytes: <op>_tperm2 right after (index + 1) */
                        strcat(tn, "2");
                        cr_assert(kt + 1 < KG_KERNEL_COUNT);
                        cr_assert_str_eq(kg_kernels[kt + 1].name, tn);
                        expected++;
                    }
                    if (op == KG_OP_COPY && d != KG_BOOL) {
                        /* copies: <op>_rowsv after those (index + 1, + 1 more after a tperm2) */
                        const int kr = kt + 1 + (kg_dtype_size((kg_dtype)d) <= 2 ? 1 : 0);
                        snprintf(tn, sizeof tn, "%.*s_rowsv", (int)strlen(kg_kernels[kd].name) - 6, kg_kernels[kd].name);
                        cr_assert(kr < KG_KERNEL_COUNT);
                        cr_assert_str_eq(kg_kernels[kr].name, tn);
                        expected++;
                        /* and <op>_tplanev, <op>_tslab right after rowsv (and <op>_tchunk until session 37) */
                        for (int v = 1; v <= 2; v++) {
                            snprintf(tn, sizeof tn, "%.*s_%s", (int)strlen(kg_kernels[kd].name) - 6,
                                     kg_kernels[kd].name, v == 1 ? "tplanev" : "tslab");
                            cr_assert(kr + v < KG_KERNEL_COUNT);
                            cr_assert_str_eq(kg_kernels[kr + v].name, tn);
                            expected++;
                        }
                        int kh = kr + 3;
                        if (kg_dtype_size((kg_dtype)d) == 2) {
                            /* 2-byte elements: <op>_tperma right after tslab */
                            snprintf(tn, sizeof tn, "%.*s_tperma", (int)strlen(kg_kernels[kd].name) - 6,
                                     kg_kernels[kd].name);
                            cr_assert(kr + 3 < KG_KERNEL_COUNT);
                            cr_assert_str_eq(kg_kernels[kr + 3].name, tn);
                            expected++;
                            kh++;
                        }
                        if (kg_dtype_size((kg_dtype)d) == 2 || kg_dtype_size((kg_dtype)d) == 4) {
                            /* 2- and 4-byte elements: <op>_tperms right after tslab (2-byte: after tperma) */
                            snprintf(tn, sizeof tn, "%.*s_tperms", (int)strlen(kg_kernels[kd].name) - 6,
                                     kg_kernels[kd].name);
                            cr_assert(kh < KG_KERNEL_COUNT);
                            cr_assert_str_eq(kg_kernels[kh].name, tn);
                            expected++;
                            /* and <op>_tplanem right after tperms (session 30) */
                            snprintf(tn, sizeof tn, "%.*s_tplanem", (int)strlen(kg_kernels[kd].name) - 6,
                                     kg_kernels[kd].name);
                            cr_assert(kh + 1 < KG_KERNEL_COUNT);
                            cr_assert_str_eq(kg_kernels[kh + 1].name, tn);
                            expected++;
                            if (kg_dtype_size((kg_dtype)d) == 2) {
                                /* 2-byte elements: <op>_tpermc right after tplanem (session 31) */
                                snprintf(tn, sizeof tn, "%.*s_tpermc", (int)strlen(kg_kernels[kd].name) - 6,
                                         kg_kernels[kd].name);
                                cr_assert(kh + 2 < KG_KERNEL_COUNT);
                                cr_assert_str_eq(kg_kernels[kh + 2].name, tn);
                                expected++;
                            }
                        }
                    }
                }
            }
        }
    }
    /* the element-wise kernels are all the manifest's kg_<op>_ entries */
    int listed = 0;
    for (const char *p = manifest; (p = strstr(p, "\nkg_")); p++) {
        for (int op = KG_OP_NONE + 1; op < KG_OP_COUNT; op++) {
            char pre[40];
            snprintf(pre, sizeof pre, "\nkg_%s_", kg_op_get_info((kg_op)op)->name);
            if (strncmp(p, pre, strlen(pre)) == 0) {
                listed++;
                break;
            }
        }
    }
    cr_assert_eq(listed, expected, "manifest lists %d element-wise kernels, table has %d", listed, expected);
    free(manifest);
}

/* runtime/elementwise.c launches a copy's kernels in its tperm module as
   tperm's index + kg_ew_copy_tpk[dtype][KG_EW_TPK_<name>] (generated from
   gen/elementwise.lua's order): each such kernel is named
   kg_copy_<dtype>_<name>, a kernel the copy lacks (-1) exists nowhere, the
   ones it has are contiguous after tperm in the enum's order, and every
   dtype has the kernels the runtime's rules can launch for it (rowsv to
   tslab: not bool; tperma, tpermc: 2-byte; tperms, tplanem: 2- and
   4-byte; tchunk: none since session 37, whose kernels left the bundle);
   an op's tperm2 is its tperm + KG_EW_TPERM2_AT. */
Test(generator, copy_tperm_kernels_match_their_names)
{
    static const char *const names[] = {
        [KG_EW_TPK_TPERM] = "tperm",     [KG_EW_TPK_TPERM2] = "tperm2", [KG_EW_TPK_ROWSV] = "rowsv",
        [KG_EW_TPK_TPLANEV] = "tplanev", [KG_EW_TPK_TSLAB] = "tslab",   [KG_EW_TPK_TCHUNK] = "tchunk",
        [KG_EW_TPK_TPERMA] = "tperma",   [KG_EW_TPK_TPERMS] = "tperms", [KG_EW_TPK_TPLANEM] = "tplanem",
        [KG_EW_TPK_TPERMC] = "tpermc",
    };
    _Static_assert(sizeof names / sizeof *names == KG_EW_TPK_COUNT, "a name for every kg_ew_tpk");
    int checked = 0;
    for (int d = 0; d < KG_DTYPE_COUNT; d++) {
        const int kt = kg_ew_tperm_table[KG_OP_COPY][d][d] - 1;
        cr_assert(kt >= 0, "copy %s has a tperm kernel", kg_dtype_name((kg_dtype)d));
        const size_t es = kg_dtype_size((kg_dtype)d);
        int next = 0; /* the offset the next kernel the copy has must take */
        for (int v = 0; v < KG_EW_TPK_COUNT; v++) {
            char tn[96];
            snprintf(tn, sizeof tn, "kg_copy_%s_%s", kg_dtype_name((kg_dtype)d), names[v]);
            const int off = kg_ew_copy_tpk[d][v];
            const int need = v == KG_EW_TPK_TPERM || (v == KG_EW_TPK_TPERM2 && es <= 2) ||
                             (v >= KG_EW_TPK_ROWSV && v <= KG_EW_TPK_TSLAB && d != KG_BOOL) ||
                             ((v == KG_EW_TPK_TPERMA || v == KG_EW_TPK_TPERMC) && es == 2) ||
                             ((v == KG_EW_TPK_TPERMS || v == KG_EW_TPK_TPLANEM) && (es == 2 || es == 4));
            cr_assert(off < 0 || need, "%s: the table has it, the runtime's rules never launch it", tn);
            if (off < 0) {
                cr_assert(!need, "%s missing (offset -1)", tn);
                for (int k = 0; k < KG_KERNEL_COUNT; k++)
                    cr_assert_str_neq(kg_kernels[k].name, tn, "%s exists at %d, its offset is -1", tn, k);
                continue;
            }
            cr_assert_eq(off, next, "%s at tperm + %d, not right after the kernel before (+ %d)", tn, off, next);
            cr_assert(kt + off < KG_KERNEL_COUNT);
            cr_assert_str_eq(kg_kernels[kt + off].name, tn);
            if (v == KG_EW_TPK_TPERM2)
                cr_assert_eq(off, KG_EW_TPERM2_AT);
            next = off + 1;
            checked++;
        }
    }
    cr_assert_eq(checked, 45, "%d kernels checked (f32 / i32 6, f64 / i64 4, f16 / bf16 9, u8 5, bool 2)", checked);
}
