/*
 * test_bundle.c - the kernel table against the compiled bundle. Each module
 * is a fatbin holding one ELF cubin per architecture (and PTX where
 * build.ninja's ptx_arch asks for it), each entry
 * stored zstd-compressed (nvcc --compress-mode=size); the test walks the
 * fatbin's entry headers and inflates every cubin with libzstd.
 * The cubins' symbol tables must hold exactly the kernels the table names
 * for that module, for every architecture the build lists (sm_80 and sm_90),
 * or, for the modules the generator declared sm90a (kg_modules[m].sm90a: the
 * Hopper attention modules, forward and backward), for sm_90a alone.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "internal.h"
#include "kg_attn_table.h"
#include "kg_table.h"
#include "kg_test.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

typedef struct {
    int arch;
    int nsyms;
    const char **syms;
    unsigned char *image; /* the inflated ELF image the names point into */
} cubin;

/* Lists the global FUNC symbols of the ELF image at p. */
static cubin read_cubin(const unsigned char *p, size_t avail)
{
    cubin c = {0, 0, NULL, NULL};
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
    cr_assert_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
    cr_assert_eq(eh->e_machine, EM_CUDA, "not a CUDA ELF: machine %d", eh->e_machine);
    cr_assert_leq(eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr), avail);
    /* the SM version is in e_flags: bits 8..15 from ELF ABI version 8 (CUDA
       12.x/13), the low byte before */
    c.arch = (int)(eh->e_ident[EI_ABIVERSION] >= 8 ? (eh->e_flags >> 8) & 0xff : eh->e_flags & 0xff);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
        const char *str = (const char *)(p + sh[sh[i].sh_link].sh_offset);
        const size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        c.syms = calloc(n, sizeof *c.syms);
        for (size_t s = 0; s < n; s++)
            if (ELF64_ST_TYPE(sym[s].st_info) == STT_FUNC && ELF64_ST_BIND(sym[s].st_info) == STB_GLOBAL)
                c.syms[c.nsyms++] = str + sym[s].st_name;
    }
    return c;
}

/*
 * A fatbin: a 16-byte header (magic 0xBA55ED50, u16 version, u16 header
 * size, u64 size of the entries that follow), then entries, each a header
 * followed by its payload. The entry header fields read here (little
 * endian, offsets from the entry's start):
 *   +0 u16 kind (1 PTX, 2 ELF cubin)   +4 u32 header size
 *   +8 u64 payload size (padded)       +16 u32 payload size (stored bytes)
 *   +28 u32 SM version                 +40 u64 flags (0x8000: compressed)
 *   +56 u64 uncompressed payload size (when compressed)
 */
enum { FATBIN_PTX = 1, FATBIN_ELF = 2, FATBIN_COMPRESSED = 0x8000 };

static uint64_t rd(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Inflates (when compressed) and reads every ELF entry of a fatbin; counts
   its PTX entries in *ptx. */
static int find_cubins(const unsigned char *b, size_t n, cubin *out, int max, const char *module, int *ptx)
{
    *ptx = 0;
    cr_assert_geq(n, 16u);
    cr_assert_eq(rd(b, 4), 0xBA55ED50u, "%s: not a fatbin (magic %08x)", module, (unsigned)rd(b, 4));
    const size_t hs = rd(b + 6, 2), end = hs + rd(b + 8, 8);
    cr_assert_leq(end, n, "%s: fatbin header says %zu bytes, the bundle holds %zu", module, end, n);
    int k = 0, compressed = 0;
    size_t off = hs;
    while (off < end) {
        cr_assert_leq(off + 64, end, "%s: truncated entry header at %zu", module, off);
        const unsigned char *e = b + off;
        const size_t ehs = rd(e + 4, 4), padded = rd(e + 8, 8), stored = rd(e + 16, 4);
        const int kind = (int)rd(e, 2), sm = (int)rd(e + 28, 4);
        const uint64_t flags = rd(e + 40, 8), full = rd(e + 56, 8);
        cr_assert(ehs >= 64 && stored <= padded && off + ehs + padded <= end, "%s: bad entry at %zu", module, off);
        const unsigned char *payload = e + ehs;
        *ptx += kind == FATBIN_PTX;
        if (kind == FATBIN_ELF) {
            cr_assert_lt(k, max, "%s: more than %d cubins", module, max);
            unsigned char *image = NULL;
            size_t size = stored;
            if (flags & FATBIN_COMPRESSED) {
                compressed++;
                cr_assert(stored >= 4 && rd(payload, 4) == 0xFD2FB528u, "%s sm_%d: compressed entry is not zstd",
                          module, sm);
                cr_assert_eq(ZSTD_getFrameContentSize(payload, stored), full,
                             "%s sm_%d: zstd frame size differs from the entry header's %zu", module, sm, (size_t)full);
                image = malloc(full);
                cr_assert_not_null(image);
                size = ZSTD_decompress(image, full, payload, stored);
                cr_assert(!ZSTD_isError(size) && size == full, "%s sm_%d: zstd: %s", module, sm,
                          ZSTD_isError(size) ? ZSTD_getErrorName(size) : "short");
            } else {
                image = malloc(stored);
                cr_assert_not_null(image);
                memcpy(image, payload, stored);
            }
            cr_assert(size >= sizeof(Elf64_Ehdr) && memcmp(image, ELFMAG, SELFMAG) == 0, "%s sm_%d: not an ELF image",
                      module, sm);
            out[k] = read_cubin(image, size);
            out[k].image = image;
            cr_assert_eq(out[k].arch, sm, "%s: entry header says sm_%d, the ELF sm_%d", module, sm, out[k].arch);
            k++;
        }
        off += ehs + padded;
    }
    /* the build stores the fatbins compressed (build.ninja's nvccflags) */
    cr_assert_eq(compressed, k, "%s: %d of %d cubins compressed", module, compressed, k);
    return k;
}

static int has(const cubin *c, const char *name)
{
    for (int i = 0; i < c->nsyms; i++)
        if (strcmp(c->syms[i], name) == 0)
            return 1;
    return 0;
}

/* 1 when module m holds kernels of an sm_90a-only attention variant. */
static int holds_sm90a_attention(int m)
{
    for (int v = 0; v < KG_ATTN_V_COUNT; v++)
        for (int d = 0; kg_attn_variant_sm90a[v] && d < KG_DTYPE_COUNT; d++)
            for (int s = 0; s < KG_ATTN_DIM_COUNT; s++)
                for (int k = 0; k < KG_ATTN_KIND_COUNT; k++) {
                    const kg_attn_entry *e = &kg_attn_table[v][d][s][k];
                    if (e->threads > 0 && kg_kernels[e->kernel].module == m)
                        return 1;
                }
    return 0;
}

Test(bundle, table_matches_the_kernels_in_every_cubin)
{
    int hoppers = 0;
    /* PTX (build.ninja's ptx_arch, none by default) in every module but the
       sm_90a ones, exactly where the arch text says so */
    const int with_ptx = strstr(kgi_bundle_archs(), "+PTX") != NULL;
    for (int m = 0; m < KG_MODULE_COUNT; m++) {
        cubin cs[8];
        const size_t size = (size_t)(kg_modules[m].end - kg_modules[m].begin);
        int ptx;
        int n = find_cubins(kg_modules[m].begin, size, cs, 8, kg_modules[m].name, &ptx);
        const int hopper = kg_modules[m].sm90a;
        cr_assert_eq(ptx, hopper ? 0 : with_ptx, "module %s holds %d PTX entries, the bundle says \"%s\"",
                     kg_modules[m].name, ptx, kgi_bundle_archs());
        hoppers += hopper;
        /* the attention variants the runtime runs on 9.0 only live in modules
           built for sm_90a only */
        cr_assert(hopper || !holds_sm90a_attention(m), "module %s holds sm_90a-only attention kernels but is not sm90a",
                  kg_modules[m].name);
        /* one cubin per listed arch: sm_80 and sm_90; sm_90a alone for Hopper */
        cr_assert_eq(n, hopper ? 1 : 2, "module %s holds %d cubins, want %s", kg_modules[m].name, n,
                     hopper ? "1 (sm_90a)" : "2 (sm_80, sm_90)");
        int seen80 = 0, seen90 = 0;
        for (int c = 0; c < n; c++) {
            seen80 += cs[c].arch == 80;
            seen90 += cs[c].arch == 90;
            int expected = 0;
            for (int k = 0; k < KG_KERNEL_COUNT; k++) {
                if (kg_kernels[k].module != m)
                    continue;
                expected++;
                cr_assert(has(&cs[c], kg_kernels[k].name), "%s missing from %s's sm_%d cubin", kg_kernels[k].name,
                          kg_modules[m].name, cs[c].arch);
            }
            cr_assert_eq(cs[c].nsyms, expected, "%s sm_%d has %d kernels, the table %d", kg_modules[m].name, cs[c].arch,
                         cs[c].nsyms, expected);
            free(cs[c].syms);
            free(cs[c].image);
        }
        if (hopper)
            cr_assert(seen90 == 1, "module %s: arch is not sm_90a", kg_modules[m].name);
        else
            cr_assert(seen80 == 1 && seen90 == 1, "module %s: archs are not sm_80 + sm_90", kg_modules[m].name);
    }
    cr_assert_geq(hoppers, 4, "want at least the four Hopper attention modules (f16, bf16; both tilings), found %d",
                  hoppers);
}

Test(bundle, kernel_entries_are_well_formed)
{
    for (int k = 0; k < KG_KERNEL_COUNT; k++) {
        cr_assert(kg_kernels[k].module >= 0 && kg_kernels[k].module < KG_MODULE_COUNT, "kernel %d", k);
        cr_assert(kg_kernels[k].vec >= 1 && kg_kernels[k].vec <= 16, "kernel %s vec %d", kg_kernels[k].name,
                  kg_kernels[k].vec);
        cr_assert(strncmp(kg_kernels[k].name, "kg_", 3) == 0, "%s", kg_kernels[k].name);
    }
}
