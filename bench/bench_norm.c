/*
 * bench_norm.c - normalizations against the limit measured in the same run
 * (device-to-device copy bandwidth); bench/torch_norm.py times PyTorch on the
 * same cases from the CSV rows this writes to $KG_BENCH_CSV.
 *
 * Cases (issue 14): softmax f32 [65536,4096] last dim and [16384,16384] dim
 * 0; rows of 32, 64 and 128 elements (softmax,
 * log_softmax, logsumexp, layer_norm, rms_norm; f32 and bf16); log_softmax; logsumexp; layer_norm and
 * rms_norm f32 and bf16 at hidden 1024, 4096, 16384; the fused residual
 * rms_norm; softmax / log_softmax along dim 0 at column lengths 128 to 16384
 * (the CLUSTER class and the COLS one beside it); the bf16 layer_norm and residual rms_norm at hidden 1024 to
 * 16384 (BULK's range); softmax / log_softmax along dim 1 of [outer, n, inner] and dim 0 of few rows (n of 3 to
 * 200: shapes no issue names). Inputs are random (a 16 MiB random block repeated, 0.5-1 GiB in
 * all, well above L2); every case is checked against the float64 reference
 * on sample rows before it is timed. Bytes count every tensor read once and
 * every tensor written once (the fused residual form: in, residual read,
 * residual and out written).
 *
 * Tuning hooks (kgi_norm_tuning): KG_NORM_LEAN=4|8|-1 picks the LEAN class of
 * 4 or 8 vectors a lane (or none: ROWS), KG_NORM_GROUP its lanes a row (at
 * least), KG_NORM_LOOSE=1 its 512-lane 128-register form, KG_NORM_VARIANT=1|2|-1
 * the norms' LEAN8 variants (1 LEAN8C, 2 LEAN8S, 3 the 2-byte lse ops' LEAN4F / LEAN8F, -1 none; norm_plan.h),
 * KG_NORM_LEANU=-1|4|8 the class of contiguous rows that vectors do not tile (STRIDED, LEANU4S, LEANU8S),
 * KG_NORM_USAN=-1 its masked folds (LEANU4, LEANU8), KG_NORM_LEANW=8|16|-1 the words a lane of rows 4-byte words tile
 * (LEANW8, LEANW16; -1: LEANU), KG_NORM_THREADS the block of warp groups, KG_NORM_SPLITS and KG_NORM_BPS the column
 * splits and blocks a multiprocessor (COLS), KG_NORM_CLUSTER=c+1|-1 softmax along an outer axis by CLUSTER
 * configuration c wherever the column fits (or COLS), KG_NORM_CSIZE its blocks a cluster (at least), KG_NORM_COLSV=-1 COLS where COLSV would serve. KG_NORM_CASES=a,b
 * runs only the cases whose name contains one of the words (KG_NORM_CASES=a;b where a word holds a comma). KG_NORM_TUNE=1 times, after each case, the same call under
 * other tunings, one line each (KG_NORM_TUNE=2: only LEAN4 / LEAN8 and their variants, LEANU; KG_NORM_TUNE=3: COLS and
 * each CLUSTER configuration; KG_NORM_TUNE=4: the defaults without PF, and LEAN16; KG_NORM_TUNE_SWEEP=1: the seeded sweep's cases too). KG_NORM_PF=1: the norms' LEAN
 * classes with the next row prefetched (LEAN4P, LEAN8P; -1: never); KG_NORM_LEAN=16: the 2-byte norms' LEAN16.
 * KG_NORM_BULK=c+1|-1: the 2-byte norms by BULK configuration c where the row fits (or never), KG_NORM_BSTAGES its
 * stages at most; KG_NORM_GRID the rows classes' blocks at most (LEAN: also above the planner's cap); KG_NORM_TUNE=5 times each BULK configuration (and with 2 stages) after the default;
 * KG_NORM_TUNE=6 LEAN groups of a power of two of lanes or of whole warps (g32), LEAN (no BULK); KG_NORM_TUNE=7 LEAN,
 * each BULKW configuration (deepest ring, 2 stages, 1 where the row is held in registers) and BULK configurations 0-2
 * at 2 stages; KG_NORM_TUNE=8 LEAN rows at 2-8 times the grid cap and a block a row group, in blocks of 128 / 256 too, and
 * at 16 / 32 lanes a row; KG_NORM_TUNE=9 the grid at the old cap of 32 blocks a multiprocessor, the default again,
 * and where BULK serves, LEAN at both grids; KG_NORM_TUNE=10 no PF, then the default again. KG_NORM_TUNE=11: the
 * default and each tuning of KG_NORM_ALTS ("key=v,key=v;key=v": threads, grid, cluster, csize, cstag, lean, group, pf,
 * bulk, variant, pair, lean2, narrow, nmerge), each checked, then timed in turn KG_NORM_ROUNDS times (3), and the best of each.
 * KG_NORM_PAIR=1|-1: rows of 32 elements at 2 vectors a lane in blocks of 128 for every op (or none), KG_NORM_LEAN2=1|-1
 * the 2-byte softmax / log_softmax of those by LEAN2F (or never). KG_NORM_WB=1|2:
 * layer_norm with its weight only (1) or neither weight nor bias (2). KG_NORM_AS_F16=1: the bf16 cases in f16 (name
 * them "f16" in KG_NORM_CASES).
 */
#include <math.h>
#include <string.h>

#include "bench_common.h"
#include "kg_norm_reference.h"
#include "kg_test.h"
#include "norm_plan.h"

typedef struct bcase {
    const char *name;
    kg_norm_op op;
    kg_dtype dt;
    int64_t rows, cols;
    int axis; /* 1: along the last dim; 0: along dim 0 */
    int res;  /* rms_norm: the fused residual form */
    int64_t outer; /* > 1: [outer, rows, cols], axis 0 then dim 1 (softmax and log_softmax only); 0 or 1: 2-d */
} bcase;

/* the case's outer count (1 for 2-d) and the dim its axis names */
static int64_t bc_outer(const bcase *c) { return c->outer > 1 ? c->outer : 1; }
static int bc_dim(const bcase *c) { return c->outer > 1 ? c->axis + 1 : c->axis; }

typedef struct brun {
    kg_context *ctx;
    const bcase *c;
    kg_tensor in, out, res, w, b, s0;
    int wb; /* layer_norm: 0 weight and bias, 1 weight only, 2 neither ($KG_NORM_WB) */
} brun;

static void run_case(void *p)
{
    brun *r = p;
    kg_context *ctx = r->ctx;
    const bcase *c = r->c;
    const int ax[] = {c->axis};
    switch (c->op) {
    case KG_NORM_SOFTMAX: BENCH_CHECK(ctx, kg_softmax(ctx, &r->out, &r->in, bc_dim(c))); break;
    case KG_NORM_LOG_SOFTMAX: BENCH_CHECK(ctx, kg_log_softmax(ctx, &r->out, &r->in, bc_dim(c))); break;
    case KG_NORM_LOGSUMEXP: BENCH_CHECK(ctx, kg_logsumexp(ctx, &r->s0, &r->in, ax, 1, 0)); break;
    case KG_NORM_LAYER_NORM:
        BENCH_CHECK(ctx, kg_layer_norm(ctx, &r->out, NULL, NULL, &r->in, 1, r->wb < 2 ? &r->w : NULL,
                                       r->wb < 1 ? &r->b : NULL, 1e-5));
        break;
    default:
        if (c->res)
            BENCH_CHECK(ctx, kg_rms_norm_residual(ctx, &r->out, &r->res, &r->in, &r->w, 1e-6));
        else
            BENCH_CHECK(ctx, kg_rms_norm(ctx, &r->out, &r->in, &r->w, 1e-6));
    }
}

typedef struct sweep_arg {
    kg_context *ctx;
    kg_norm_call call;
    kg_norm_plan plan;
} sweep_arg;

/* 1 when the case's name (and dtype) matches $KG_NORM_CASES (a comma list of
   substrings of "name dtype"; a ';' list where one holds a comma), or it is
   unset. */
static int wanted(const bcase *c)
{
    const char *f = getenv("KG_NORM_CASES");
    if (!f || !*f)
        return 1;
    char full[96];
    snprintf(full, sizeof full, "%s %s", c->name, kg_dtype_name(c->dt));
    char buf[512];
    snprintf(buf, sizeof buf, "%s", f);
    const char *sep = strchr(buf, ';') ? ";" : ","; /* ';' where the names hold commas */
    for (char *tok = strtok(buf, sep); tok; tok = strtok(NULL, sep))
        if (strstr(full, tok))
            return 1;
    return 0;
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : 0;
}

/* KG_NORM_ALTS: tunings "key=v,key=v;key=v" (KG_NORM_TUNE=11); returns how many, at most most */
static int parse_alts(kg_norm_tuning *alts, int most)
{
    const char *f = getenv("KG_NORM_ALTS");
    if (!f)
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", f);
    int na = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ";", &save); tok && na < most; tok = strtok_r(NULL, ";", &save)) {
        kg_norm_tuning t = {0};
        char *s2 = NULL;
        for (char *kv = strtok_r(tok, ",", &s2); kv; kv = strtok_r(NULL, ",", &s2)) {
            char key[32];
            int v = 0;
            if (sscanf(kv, "%31[a-z0-9]=%d", key, &v) != 2) {
                fprintf(stderr, "KG_NORM_ALTS: '%s' is not key=value\n", kv);
                exit(2);
            }
            int *slot = !strcmp(key, "threads")   ? &t.threads
                        : !strcmp(key, "grid")    ? &t.grid
                        : !strcmp(key, "cluster") ? &t.cluster
                        : !strcmp(key, "csize")   ? &t.csize
                        : !strcmp(key, "cstag")   ? &t.cstag
                        : !strcmp(key, "lean")    ? &t.lean
                        : !strcmp(key, "group")   ? &t.group
                        : !strcmp(key, "pf")      ? &t.pf
                        : !strcmp(key, "bulk")    ? &t.bulk
                        : !strcmp(key, "variant") ? &t.variant
                        : !strcmp(key, "pair")    ? &t.pair
                        : !strcmp(key, "lean2")   ? &t.lean2
                        : !strcmp(key, "narrow")  ? &t.narrow
                        : !strcmp(key, "nmerge")  ? &t.nmerge
                                                  : NULL;
            if (!slot) {
                fprintf(stderr, "KG_NORM_ALTS: no key '%s'\n", key);
                exit(2);
            }
            *slot = v;
        }
        alts[na++] = t;
    }
    return na;
}

static void run_plan(void *p)
{
    sweep_arg *a = p;
    BENCH_CHECK(a->ctx, kg_norm_launch(a->ctx, &a->call, &a->plan));
}

#define PATTERN ((int64_t)4 << 20) /* elements of the random block */

/* Fills n elements of dtype dt at dev with the host block repeated. */
static void fill(kg_context *ctx, void *dev, kg_dtype dt, int64_t n, const void *block)
{
    const size_t es = kg_dtype_size(dt);
    const int64_t first = n < PATTERN ? n : PATTERN;
    BENCH_CHECK(ctx, kg_copy_in(ctx, dev, block, (size_t)first * es));
    for (int64_t at = first; at < n; at += PATTERN) {
        const int64_t k = n - at < PATTERN ? n - at : PATTERN;
        cudaMemcpy((char *)dev + at * (int64_t)es, dev, (size_t)k * es, cudaMemcpyDeviceToDevice);
    }
}

/* Checks sample rows (columns for dim 0) against the reference; 0 when all
   match. block/wblk/bblk/rblk: the host values (element i is block[i %
   PATTERN]); residual rows are checked as written back. */
static int verify(brun *r, const void *block, const void *wh, const void *bh, const void *rblk)
{
    kg_context *ctx = r->ctx;
    const bcase *c = r->c;
    const kg_dtype dt = c->dt;
    const size_t es = kg_dtype_size(dt);
    const int64_t O = bc_outer(c), n_el = O * c->rows * c->cols, L = c->axis ? c->cols : c->rows,
                  nrow = O * (c->axis ? c->rows : c->cols);
    const int elementwise = c->op != KG_NORM_LOGSUMEXP;
    if (elementwise)
        BENCH_CHECK(ctx, kg_memset(ctx, r->out.data, 0xff, (size_t)n_el * es));
    else
        BENCH_CHECK(ctx, kg_memset(ctx, r->s0.data, 0xff, (size_t)nrow * es));
    if (c->res)
        fill(ctx, r->res.data, dt, n_el, rblk);
    run_case(r);
    BENCH_CHECK(ctx, kg_sync(ctx));
    double rtol, atol;
    kt_tolerance(dt, &rtol, &atol);
    double *x = malloc(sizeof(double) * (size_t)L), *y = malloc(sizeof(double) * (size_t)L);
    double *wv = malloc(sizeof(double) * (size_t)L), *bv = malloc(sizeof(double) * (size_t)L);
    unsigned char *got = malloc((size_t)L * es), *hres = malloc((size_t)L * es);
    int bad = 0;
    const int64_t samples[] = {0, 1, nrow / 3, nrow / 2 + 7, nrow - 1};
    /* a row (dim 1) or a column (dim 0) of t into host, in one copy */
    const size_t pitch = c->axis ? es : (size_t)c->cols * es;
    for (int s = 0; s < 5 && !bad; s++) {
        const int64_t row = samples[s] < nrow ? samples[s] : nrow - 1;
        /* dim 0 (of [rows, cols] or dim 1 of [outer, rows, cols]): column row % cols of outer row / cols */
        const int64_t base = c->axis ? row * c->cols : row / c->cols * c->rows * c->cols + row % c->cols,
                      step = c->axis ? 1 : c->cols;
        if (c->res && cudaMemcpy2D(hres, es, (char *)r->res.data + base * (int64_t)es, pitch, es, (size_t)L,
                                   cudaMemcpyDeviceToHost) != cudaSuccess)
            bad = 1;
        if (elementwise && cudaMemcpy2D(got, es, (char *)r->out.data + base * (int64_t)es, pitch, es, (size_t)L,
                                        cudaMemcpyDeviceToHost) != cudaSuccess)
            bad = 1;
        for (int64_t e = 0; e < L; e++) {
            const int64_t i = base + e * step;
            x[e] = kt_get(block, dt, i % PATTERN);
            if (c->res) {
                const double want = kt_round(dt, x[e] + kt_get(rblk, dt, i % PATTERN));
                const double h = kt_get(hres, dt, e);
                if (!kt_close(h, want, rtol, atol) && !bad) {
                    fprintf(stderr, "%s %s: residual row %lld elem %lld: got %.9g want %.9g\n", c->name,
                            kg_dtype_name(dt), (long long)row, (long long)e, h, want);
                    bad = 1;
                }
                x[e] = h;
            }
            wv[e] = wh ? kt_get(wh, dt, e) : 1;
            bv[e] = bh ? kt_get(bh, dt, e) : 0;
        }
        double r0 = 0, r1 = 0;
        kg_norm_refs[c->op](x, L, wh ? wv : NULL, bh ? bv : NULL, c->op == KG_NORM_LAYER_NORM ? 1e-5 : 1e-6, y, &r0,
                            &r1);
        if (elementwise) {
            for (int64_t e = 0; e < L && !bad; e++) {
                const double g = kt_get(got, dt, e);
                if (!kt_close(g, kt_round(dt, y[e]), rtol, atol)) {
                    fprintf(stderr, "%s %s: row %lld elem %lld: got %.9g want %.9g\n", c->name, kg_dtype_name(dt),
                            (long long)row, (long long)e, g, kt_round(dt, y[e]));
                    bad = 1;
                }
            }
        } else {
            unsigned char v[8];
            BENCH_CHECK(ctx, kg_copy_out(ctx, v, (char *)r->s0.data + row * (int64_t)es, es));
            if (!kt_close(kt_get(v, dt, 0), kt_round(dt, r0), rtol, atol)) {
                fprintf(stderr, "%s: row %lld: got %.9g want %.9g\n", c->name, (long long)row, kt_get(v, dt, 0), r0);
                bad = 1;
            }
        }
    }
    free(x);
    free(y);
    free(wv);
    free(bv);
    free(got);
    free(hres);
    return bad;
}

int main(void)
{
    kg_context *ctx;
    if (kg_open(&ctx, 0) != KG_OK) {
        printf("bench_norm: no GPU (%s): nothing to measure\n", kg_errmsg(ctx));
        kg_close(ctx);
        return 0;
    }
    FILE *csv = bench_csv_open();
    kgi_norm_tuning.threads = env_int("KG_NORM_THREADS");
    kgi_norm_tuning.bps = env_int("KG_NORM_BPS");
    kgi_norm_tuning.lean = env_int("KG_NORM_LEAN");
    kgi_norm_tuning.group = env_int("KG_NORM_GROUP");
    kgi_norm_tuning.loose = env_int("KG_NORM_LOOSE");
    kgi_norm_tuning.variant = env_int("KG_NORM_VARIANT");
    kgi_norm_tuning.leanu = env_int("KG_NORM_LEANU");
    kgi_norm_tuning.usan = env_int("KG_NORM_USAN");
    kgi_norm_tuning.leanw = env_int("KG_NORM_LEANW");
    const int tune_sweep = env_int("KG_NORM_TUNE_SWEEP");
    kgi_norm_tuning.col_splits = env_int("KG_NORM_SPLITS");
    kgi_norm_tuning.cluster = env_int("KG_NORM_CLUSTER");
    kgi_norm_tuning.csize = env_int("KG_NORM_CSIZE");
    kgi_norm_tuning.colsv = env_int("KG_NORM_COLSV");
    kgi_norm_tuning.pf = env_int("KG_NORM_PF");
    kgi_norm_tuning.bulk = env_int("KG_NORM_BULK");
    kgi_norm_tuning.bstages = env_int("KG_NORM_BSTAGES");
    kgi_norm_tuning.grid = env_int("KG_NORM_GRID");
    kgi_norm_tuning.pair = env_int("KG_NORM_PAIR");
    kgi_norm_tuning.lean2 = env_int("KG_NORM_LEAN2");
    const kg_norm_tuning tuned = kgi_norm_tuning;
    const int tune = env_int("KG_NORM_TUNE");
    const int as_f16 = env_int("KG_NORM_AS_F16");
    const double copy = bench_copy_gbps(ctx, (size_t)1 << 30);
    printf("# normalizations; same-run copy bandwidth %.0f GB/s\n", copy);
    if (csv)
        fprintf(csv, "norm-limit,copy,u8,%lld,0,%.1f\n", (long long)1 << 30, copy);

    static const bcase fixed[] = {
        {"softmax [65536,4096] dim 1", KG_NORM_SOFTMAX, KG_F32, 65536, 4096, 1, 0, 0},
        {"softmax [16384,16384] dim 0", KG_NORM_SOFTMAX, KG_F32, 16384, 16384, 0, 0, 0},
        {"softmax [16384,16384] dim 1", KG_NORM_SOFTMAX, KG_F32, 16384, 16384, 1, 0, 0},
        {"softmax [4194304,32] dim 1", KG_NORM_SOFTMAX, KG_F32, 4194304, 32, 1, 0, 0},
        {"softmax [4194304,64] dim 1", KG_NORM_SOFTMAX, KG_F32, 4194304, 64, 1, 0, 0},
        {"softmax [2097152,128] dim 1", KG_NORM_SOFTMAX, KG_F32, 2097152, 128, 1, 0, 0},
        {"softmax [32768,1024] dim 1", KG_NORM_SOFTMAX, KG_F32, 32768, 1024, 1, 0, 0},
        {"softmax [65536,4096] dim 1", KG_NORM_SOFTMAX, KG_BF16, 65536, 4096, 1, 0, 0},
        {"softmax [4194304,64] dim 1", KG_NORM_SOFTMAX, KG_BF16, 4194304, 64, 1, 0, 0},
        {"log_softmax [65536,4096] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 65536, 4096, 1, 0, 0},
        {"log_softmax [4194304,64] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 4194304, 64, 1, 0, 0},
        {"logsumexp [65536,4096] dim 1", KG_NORM_LOGSUMEXP, KG_F32, 65536, 4096, 1, 0, 0},
        {"logsumexp [4194304,64] dim 1", KG_NORM_LOGSUMEXP, KG_F32, 4194304, 64, 1, 0, 0},
        {"logsumexp [16384,16384] dim 0", KG_NORM_LOGSUMEXP, KG_F32, 16384, 16384, 0, 0, 0},
        {"log_softmax [16384,16384] dim 0", KG_NORM_LOG_SOFTMAX, KG_F32, 16384, 16384, 0, 0, 0},
        {"softmax [16384,16384] dim 0", KG_NORM_SOFTMAX, KG_BF16, 16384, 16384, 0, 0, 0},
        {"softmax [8192,32768] dim 0", KG_NORM_SOFTMAX, KG_F32, 8192, 32768, 0, 0, 0},
        {"softmax [4096,65536] dim 0", KG_NORM_SOFTMAX, KG_F32, 4096, 65536, 0, 0, 0},
        {"softmax [1000,262144] dim 0", KG_NORM_SOFTMAX, KG_F32, 1000, 262144, 0, 0, 0},
        {"softmax [128,2097152] dim 0", KG_NORM_SOFTMAX, KG_F32, 128, 2097152, 0, 0, 0},
        {"log_softmax [12000,22360] dim 0", KG_NORM_LOG_SOFTMAX, KG_BF16, 12000, 22360, 0, 0, 0},
        {"layer_norm [262144,1024]", KG_NORM_LAYER_NORM, KG_F32, 262144, 1024, 1, 0, 0},
        {"layer_norm [65536,4096]", KG_NORM_LAYER_NORM, KG_F32, 65536, 4096, 1, 0, 0},
        {"layer_norm [16384,16384]", KG_NORM_LAYER_NORM, KG_F32, 16384, 16384, 1, 0, 0},
        {"layer_norm [262144,1024]", KG_NORM_LAYER_NORM, KG_BF16, 262144, 1024, 1, 0, 0},
        {"layer_norm [65536,4096]", KG_NORM_LAYER_NORM, KG_BF16, 65536, 4096, 1, 0, 0},
        {"layer_norm [16384,16384]", KG_NORM_LAYER_NORM, KG_BF16, 16384, 16384, 1, 0, 0},
        {"rms_norm [262144,1024]", KG_NORM_RMS_NORM, KG_F32, 262144, 1024, 1, 0, 0},
        {"rms_norm [65536,4096]", KG_NORM_RMS_NORM, KG_F32, 65536, 4096, 1, 0, 0},
        {"rms_norm [16384,16384]", KG_NORM_RMS_NORM, KG_F32, 16384, 16384, 1, 0, 0},
        {"rms_norm [262144,1024]", KG_NORM_RMS_NORM, KG_BF16, 262144, 1024, 1, 0, 0},
        {"rms_norm [65536,4096]", KG_NORM_RMS_NORM, KG_BF16, 65536, 4096, 1, 0, 0},
        {"rms_norm [16384,16384]", KG_NORM_RMS_NORM, KG_BF16, 16384, 16384, 1, 0, 0},
        {"rms_norm+residual [65536,4096]", KG_NORM_RMS_NORM, KG_BF16, 65536, 4096, 1, 1, 0},
        {"rms_norm+residual [65536,4096]", KG_NORM_RMS_NORM, KG_F32, 65536, 4096, 1, 1, 0},
        {"logsumexp [4194304,64] dim 1", KG_NORM_LOGSUMEXP, KG_BF16, 4194304, 64, 1, 0, 0},
        {"rms_norm [4194304,64]", KG_NORM_RMS_NORM, KG_F32, 4194304, 64, 1, 0, 0},
        {"layer_norm [2097152,128]", KG_NORM_LAYER_NORM, KG_BF16, 2097152, 128, 1, 0, 0},
        {"rms_norm+residual [4194304,64]", KG_NORM_RMS_NORM, KG_BF16, 4194304, 64, 1, 1, 0},
        {"layer_norm [131072,2048]", KG_NORM_LAYER_NORM, KG_BF16, 131072, 2048, 1, 0, 0},
        {"layer_norm [52428,5120]", KG_NORM_LAYER_NORM, KG_BF16, 52428, 5120, 1, 0, 0},
        {"layer_norm [43690,6144]", KG_NORM_LAYER_NORM, KG_BF16, 43690, 6144, 1, 0, 0},
        {"layer_norm [32768,8192]", KG_NORM_LAYER_NORM, KG_BF16, 32768, 8192, 1, 0, 0},
        {"rms_norm+residual [262144,1024]", KG_NORM_RMS_NORM, KG_BF16, 262144, 1024, 1, 1, 0},
        {"rms_norm+residual [32768,8192]", KG_NORM_RMS_NORM, KG_BF16, 32768, 8192, 1, 1, 0},
        {"rms_norm+residual [16384,16384]", KG_NORM_RMS_NORM, KG_BF16, 16384, 16384, 1, 1, 0},
        {"layer_norm [87381,3072]", KG_NORM_LAYER_NORM, KG_BF16, 87381, 3072, 1, 0, 0},
        {"rms_norm+residual [131072,2048]", KG_NORM_RMS_NORM, KG_BF16, 131072, 2048, 1, 1, 0},
        {"layer_norm [104857,2560]", KG_NORM_LAYER_NORM, KG_BF16, 104857, 2560, 1, 0, 0},
        {"layer_norm [74898,3584]", KG_NORM_LAYER_NORM, KG_BF16, 74898, 3584, 1, 0, 0},
        {"softmax [4194304,32] dim 1", KG_NORM_SOFTMAX, KG_BF16, 4194304, 32, 1, 0, 0},
        {"softmax [2097152,128] dim 1", KG_NORM_SOFTMAX, KG_BF16, 2097152, 128, 1, 0, 0},
        {"log_softmax [4194304,32] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 4194304, 32, 1, 0, 0},
        {"log_softmax [2097152,128] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 2097152, 128, 1, 0, 0},
        {"log_softmax [4194304,32] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 4194304, 32, 1, 0, 0},
        {"log_softmax [4194304,64] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 4194304, 64, 1, 0, 0},
        {"log_softmax [2097152,128] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 2097152, 128, 1, 0, 0},
        {"rms_norm [4194304,32]", KG_NORM_RMS_NORM, KG_F32, 4194304, 32, 1, 0, 0},
        {"rms_norm [2097152,128]", KG_NORM_RMS_NORM, KG_F32, 2097152, 128, 1, 0, 0},
        {"rms_norm [4194304,32]", KG_NORM_RMS_NORM, KG_BF16, 4194304, 32, 1, 0, 0},
        {"rms_norm [4194304,64]", KG_NORM_RMS_NORM, KG_BF16, 4194304, 64, 1, 0, 0},
        {"rms_norm [2097152,128]", KG_NORM_RMS_NORM, KG_BF16, 2097152, 128, 1, 0, 0},
        {"logsumexp [4194304,32] dim 1", KG_NORM_LOGSUMEXP, KG_F32, 4194304, 32, 1, 0, 0},
        {"logsumexp [2097152,128] dim 1", KG_NORM_LOGSUMEXP, KG_F32, 2097152, 128, 1, 0, 0},
        {"logsumexp [4194304,32] dim 1", KG_NORM_LOGSUMEXP, KG_BF16, 4194304, 32, 1, 0, 0},
        {"logsumexp [2097152,128] dim 1", KG_NORM_LOGSUMEXP, KG_BF16, 2097152, 128, 1, 0, 0},
        {"layer_norm [4194304,32]", KG_NORM_LAYER_NORM, KG_F32, 4194304, 32, 1, 0, 0},
        {"layer_norm [4194304,64]", KG_NORM_LAYER_NORM, KG_F32, 4194304, 64, 1, 0, 0},
        {"layer_norm [2097152,128]", KG_NORM_LAYER_NORM, KG_F32, 2097152, 128, 1, 0, 0},
        {"layer_norm [4194304,32]", KG_NORM_LAYER_NORM, KG_BF16, 4194304, 32, 1, 0, 0},
        {"layer_norm [4194304,64]", KG_NORM_LAYER_NORM, KG_BF16, 4194304, 64, 1, 0, 0},
        /* outer axes of few rows, shapes no issue names (session 22): dim 1 of [outer, n, inner] */
        {"softmax [4096,64,1024] dim 1", KG_NORM_SOFTMAX, KG_F32, 64, 1024, 0, 0, 4096},
        {"softmax [4096,64,1024] dim 1", KG_NORM_SOFTMAX, KG_BF16, 64, 1024, 0, 0, 4096},
        {"log_softmax [4096,64,1024] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 64, 1024, 0, 0, 4096},
        {"softmax [2048,3,4096] dim 1", KG_NORM_SOFTMAX, KG_F32, 3, 4096, 0, 0, 2048},
        {"softmax [2048,3,4096] dim 1", KG_NORM_SOFTMAX, KG_BF16, 3, 4096, 0, 0, 2048},
        {"softmax [512,200,1536] dim 1", KG_NORM_SOFTMAX, KG_F32, 200, 1536, 0, 0, 512},
        {"log_softmax [512,200,1536] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 200, 1536, 0, 0, 512},
        {"softmax [64,4194304] dim 0", KG_NORM_SOFTMAX, KG_F32, 64, 4194304, 0, 0, 0},
        {"softmax [128,2097152] dim 0", KG_NORM_SOFTMAX, KG_BF16, 128, 2097152, 0, 0, 0},
        {"softmax [16384,8,2048] dim 1", KG_NORM_SOFTMAX, KG_F32, 8, 2048, 0, 0, 16384},
        {"softmax [200,600,2048] dim 1", KG_NORM_SOFTMAX, KG_F32, 600, 2048, 0, 0, 200},
        {"softmax [256,400,2048] dim 1", KG_NORM_SOFTMAX, KG_F32, 400, 2048, 0, 0, 256},
        {"softmax [262144,32,32] dim 1", KG_NORM_SOFTMAX, KG_F32, 32, 32, 0, 0, 262144},
        {"log_softmax [131072,100,16] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 100, 16, 0, 0, 131072},
        /* columns of fewer than 16 vectors along an outer axis of few rows (COLT's narrow configurations, session 23) */
        {"softmax [262144,32,32] dim 1", KG_NORM_SOFTMAX, KG_BF16, 32, 32, 0, 0, 262144},
        {"softmax [262144,16,16] dim 1", KG_NORM_SOFTMAX, KG_F32, 16, 16, 0, 0, 262144},
        {"softmax [524288,8,32] dim 1", KG_NORM_SOFTMAX, KG_F32, 8, 32, 0, 0, 524288},
        {"softmax [65536,64,16] dim 1", KG_NORM_SOFTMAX, KG_BF16, 64, 16, 0, 0, 65536},
        {"log_softmax [32768,200,8] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 200, 8, 0, 0, 32768},
        {"softmax [2097152,4,8] dim 1", KG_NORM_SOFTMAX, KG_F32, 4, 8, 0, 0, 2097152},
        {"softmax [256,300,2048] dim 1", KG_NORM_SOFTMAX, KG_F32, 300, 2048, 0, 0, 256},
        {"softmax [256,300,2048] dim 1", KG_NORM_SOFTMAX, KG_BF16, 300, 2048, 0, 0, 256},
        {"log_softmax [512,350,1024] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 350, 1024, 0, 0, 512},
        {"softmax [300,65536] dim 0", KG_NORM_SOFTMAX, KG_F32, 300, 65536, 0, 0, 0},
        {"softmax [65536,100,32] dim 1", KG_NORM_SOFTMAX, KG_F32, 100, 32, 0, 0, 65536},
        {"log_softmax [16384,256,64] dim 1", KG_NORM_LOG_SOFTMAX, KG_BF16, 256, 64, 0, 0, 16384},
        {"softmax [32768,500,16] dim 1", KG_NORM_SOFTMAX, KG_F32, 500, 16, 0, 0, 32768},
        /* the 2-byte softmax over columns of 8 vectors and of 1 (COLT's narrow 8 and 1 lanes a row; session 24) */
        {"softmax [131072,32,64] dim 1", KG_NORM_SOFTMAX, KG_BF16, 32, 64, 0, 0, 131072},
        {"softmax [2097152,16,8] dim 1", KG_NORM_SOFTMAX, KG_BF16, 16, 8, 0, 0, 2097152},
        /* session 26: the 2-byte softmax along dim 0 at 8 and 4 blocks a cluster; f32 columns of 2 vectors of 4 and 8
           rows (COLT's narrow 15, 1 row group) */
        {"softmax [8192,32768] dim 0", KG_NORM_SOFTMAX, KG_BF16, 8192, 32768, 0, 0, 0},
        {"softmax [4096,65536] dim 0", KG_NORM_SOFTMAX, KG_BF16, 4096, 65536, 0, 0, 0},
        {"log_softmax [2097152,4,8] dim 1", KG_NORM_LOG_SOFTMAX, KG_F32, 4, 8, 0, 0, 2097152},
        {"softmax [1048576,8,8] dim 1", KG_NORM_SOFTMAX, KG_F32, 8, 8, 0, 0, 1048576},
    };
    /* KG_NORM_RAND=<seed>: after the fixed cases (or alone, with
       KG_NORM_RAND_ONLY=1), KG_NORM_RAND_N (default 24) cases drawn from the
       seed over shapes no issue names: every op (and the residual form), f32
       and bf16, hidden sizes m * 2^k with m odd (96..16384), one in six not a
       multiple of 8 elements (no 16-byte vectors), one in eight softmax along
       dim 0 (KG_NORM_RAND_DIM0=1: every case softmax or log_softmax along
       dim 0); 2^26 (f32) or 2^27 (bf16) elements, above L2. Grouped by dtype;
       written to the CSV as norm-sweep rows (torch_norm.py reports their
       worst and median), the worst and median %copy printed here. */
    enum { NRAND_MAX = 64 };
    static bcase cases[sizeof fixed / sizeof fixed[0] + NRAND_MAX];
    static char rnames[NRAND_MAX][64];
    size_t ncases = 0, nfixed = 0;
    if (!env_int("KG_NORM_RAND_ONLY") || !getenv("KG_NORM_RAND"))
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            cases[ncases++] = fixed[i];
    nfixed = ncases;
    if (getenv("KG_NORM_RAND")) {
        uint64_t st = (uint64_t)env_int("KG_NORM_RAND") * 0x9E3779B97F4A7C15ull + 1;
        int nr = env_int("KG_NORM_RAND_N");
        const int rdim0 = env_int("KG_NORM_RAND_DIM0"); /* 1: softmax / log_softmax along dim 0 only */
        nr = nr < 1 ? 24 : nr > NRAND_MAX ? NRAND_MAX : nr;
        static const int odd[] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 21, 25, 27, 45, 63, 95};
        static const kg_norm_op ops[] = {KG_NORM_SOFTMAX,    KG_NORM_LOG_SOFTMAX, KG_NORM_LOGSUMEXP,
                                         KG_NORM_LAYER_NORM, KG_NORM_RMS_NORM,    KG_NORM_RMS_NORM};
        for (int pass = 0; pass < 2; pass++) /* f32 cases, then bf16 (one fill each) */
            for (int k = 0; k < nr; k++) {
                uint64_t cs = st + (uint64_t)k * 0x2545F4914F6CDD1Dull;
                const kg_dtype dt = kt_next(&cs) % 2 ? KG_BF16 : KG_F32;
                if ((dt == KG_BF16) != pass)
                    continue;
                const int oi = rdim0 ? (int)(kt_next(&cs) % 2) : (int)(kt_next(&cs) % 6);
                int64_t h;
                do {
                    h = odd[kt_next(&cs) % (sizeof odd / sizeof odd[0])] * ((int64_t)1 << (kt_next(&cs) % 15));
                } while (h < 96 || h > 16384);
                if (kt_next(&cs) % 6 == 0)
                    h = h - 1 - (int64_t)(kt_next(&cs) % 7); /* not a multiple of 8 */
                const int dim0 = rdim0 || (oi == 0 && kt_next(&cs) % 8 == 0);
                const int64_t total = (int64_t)1 << (dt == KG_BF16 ? 27 : 26), rows = total / h;
                bcase *c = &cases[ncases++];
                *c = (bcase){rnames[k], ops[oi], dt, rows, h, dim0 ? 0 : 1, oi == 5, 0};
                snprintf(rnames[k], sizeof rnames[k], "%s [%lld,%lld]%s",
                         oi == 5 ? "rms_norm+residual" : kg_norm_infos[ops[oi]].name, (long long)rows, (long long)h,
                         dim0      ? " dim 0"
                         : oi <= 2 ? " dim 1"
                                   : "");
            }
    }
    double sweep_pct[NRAND_MAX];
    int nsweep = 0;
    const int64_t max_el = (int64_t)1 << 28;
    void *din, *dout, *dres, *dw, *db;
    BENCH_CHECK(ctx, kg_malloc(ctx, &din, (size_t)max_el * 4));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dout, (size_t)max_el * 4));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dres, (size_t)max_el * 4));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dw, 16384 * 8));
    BENCH_CHECK(ctx, kg_malloc(ctx, &db, 16384 * 8));
    void *blk = malloc((size_t)PATTERN * 8), *rblk = malloc((size_t)PATTERN * 8);
    void *wh = malloc(16384 * 8), *bh = malloc(16384 * 8);
    uint64_t rng = 12345;
    printf("%-34s %-5s %10s %10s %8s %6s\n", "case", "dtype", "us", "GB/s", "%copy", "check");
    int failed = 0;
    kg_dtype filled = KG_DTYPE_COUNT;
    for (size_t i = 0; i < ncases; i++) {
        bcase ci = cases[i];
        if (as_f16 && ci.dt == KG_BF16)
            ci.dt = KG_F16;
        const bcase *c = &ci;
        const int sweep = i >= nfixed;
        if (!sweep && !wanted(c))
            continue;
        const kg_dtype dt = c->dt;
        const size_t es = kg_dtype_size(dt);
        const int64_t n = bc_outer(c) * c->rows * c->cols;
        if (filled != dt) {
            for (int64_t k = 0; k < PATTERN; k++) {
                kt_set(blk, dt, k, kt_uniform(&rng, -4, 4));
                kt_set(rblk, dt, k, kt_uniform(&rng, -1, 1));
            }
            for (int64_t k = 0; k < 16384; k++) {
                kt_set(wh, dt, k, kt_uniform(&rng, 0.5, 1.5));
                kt_set(bh, dt, k, kt_uniform(&rng, -0.5, 0.5));
            }
            BENCH_CHECK(ctx, kg_copy_in(ctx, dw, wh, 16384 * es));
            BENCH_CHECK(ctx, kg_copy_in(ctx, db, bh, 16384 * es));
            filled = dt;
            fill(ctx, din, dt, max_el, blk);
        }
        brun r = {.ctx = ctx, .c = c, .wb = env_int("KG_NORM_WB")};
        const int nd = c->outer > 1 ? 3 : 2;
        const int64_t shape[3] = {nd == 3 ? c->outer : c->rows, nd == 3 ? c->rows : c->cols, c->cols};
        r.in = kg_tensor_contiguous(din, dt, nd, shape);
        r.out = kg_tensor_contiguous(dout, dt, nd, shape);
        r.res = kg_tensor_contiguous(dres, dt, nd, shape);
        r.w = kg_tensor_contiguous(dw, dt, 1, &c->cols);
        r.b = kg_tensor_contiguous(db, dt, 1, &c->cols);
        const int64_t nrow = bc_outer(c) * (c->axis ? c->rows : c->cols);
        r.s0 = kg_tensor_contiguous(dout, dt, 1, &nrow);
        const int use_w = c->op == KG_NORM_LAYER_NORM || c->op == KG_NORM_RMS_NORM;
        const int ln = c->op == KG_NORM_LAYER_NORM;
        const int bad = verify(&r, blk, use_w && (!ln || r.wb < 2) ? wh : NULL, ln && r.wb < 1 ? bh : NULL, rblk);
        failed |= bad;
        const double us = bench_time_us(ctx, run_case, &r, 10, 9);
        double bytes = (double)n * (double)es * (c->op == KG_NORM_LOGSUMEXP ? 1 : 2) +
                       (c->op == KG_NORM_LOGSUMEXP ? (double)nrow * (double)es : 0);
        if (c->res)
            bytes += 2.0 * (double)n * (double)es;
        const double gbps = bytes / (us * 1e3);
        /* the class the call ran */
        kg_norm_plan pl;
        kg_norm_call pc = {.op = c->op,
                           .in = &r.in,
                           .out = c->op == KG_NORM_LOGSUMEXP ? NULL : &r.out,
                           .s0 = c->op == KG_NORM_LOGSUMEXP ? &r.s0 : NULL,
                           .res = c->res ? &r.res : NULL,
                           .w = use_w && (!ln || r.wb < 2) ? &r.w : NULL,
                           .b = ln && r.wb < 1 ? &r.b : NULL,
                           .axis = bc_dim(c),
                           .axes = (const int[]){bc_dim(c)},
                           .n_axes = 1,
                           .k = 1,
                           .eps = 1e-5};
        int ma = 0, mi = 0, sms = 132;
        char dn[128];
        BENCH_CHECK(ctx, kg_device_info(ctx, dn, sizeof dn, &ma, &mi, &sms));
        const int planned = kg_norm_plan_call(ctx, &pc, sms, &pl) == KG_OK;
        printf(
            "%-34s %-5s %10.1f %10.1f %7.1f%% %6s  cls %d g %d nv %d opt %d block %u grid %u cluster %d x %d grid %u "
            "bulk %d x %d grid %u\n",
            c->name, kg_dtype_name(dt), us, gbps, 100 * gbps / copy, bad ? "FAIL" : "ok", planned ? (int)pl.cls : -1,
            pl.args.group, pl.args.nv, pl.args.opt, pl.block, pl.grid, planned ? pl.ccfg : -1, pl.csize, pl.cgrid,
            planned ? pl.bcfg : -1, pl.bstages, pl.bgrid);
        fflush(stdout);
        if (sweep)
            sweep_pct[nsweep++] = bad ? 0 : 100 * gbps / copy;
        if (tune == 11 && !sweep) {
            /* the default (alts[0]) and KG_NORM_ALTS in turn, each checked first */
            kg_norm_tuning alts[9] = {tuned};
            const int na = 1 + parse_alts(alts + 1, 8);
            const int rounds = env_int("KG_NORM_ROUNDS") > 0 ? env_int("KG_NORM_ROUNDS") : 3;
            double best[9];
            int badk[9];
            for (int a = 0; a < na; a++) {
                kgi_norm_tuning = alts[a];
                badk[a] = verify(&r, blk, use_w && (!ln || r.wb < 2) ? wh : NULL, ln && r.wb < 1 ? bh : NULL, rblk);
                failed |= badk[a];
                best[a] = 1e30;
            }
            for (int k = 0; k < rounds; k++)
                for (int a = 0; a < na; a++) {
                    kgi_norm_tuning = alts[a];
                    const double ut = bench_time_us(ctx, run_case, &r, 6, 5);
                    if (ut < best[a])
                        best[a] = ut;
                    printf("  round %d alt %d: %10.1f us %6.1f%%\n", k, a, ut, 100 * bytes / (ut * 1e3) / copy);
                }
            for (int a = 0; a < na; a++) {
                kgi_norm_tuning = alts[a];
                const int ok = kg_norm_plan_call(ctx, &pc, sms, &pl) == KG_OK;
                printf("  alt %d best %10.1f us %8.1f GB/s %6.1f%% %s  cls %d g %d block %u grid %u cluster %d x %d "
                       "grid %u (%s)\n",
                       a, best[a], bytes / (best[a] * 1e3), 100 * bytes / (best[a] * 1e3) / copy,
                       badk[a] ? "FAIL" : "ok", ok ? (int)pl.cls : -1, pl.args.group, pl.block, pl.grid,
                       ok ? pl.ccfg : -1, pl.csize, pl.cgrid, a ? "alt" : "default");
            }
            kgi_norm_tuning = tuned;
            fflush(stdout);
        }
        if (tune && tune != 11 && (!sweep || tune_sweep)) {
            /* other tunings of the same call, each timed: ROWS (no LEAN),
               LEAN4 / LEAN8 with
               more lanes a row, LOOSE, blocks of 128 / 512 for warp groups,
               COLS splits and blocks a multiprocessor */
            kg_norm_tuning alts[80];
            int na = 0, again = -1; /* again: the default, timed again */
            if (tune == 10) {
                /* KG_NORM_TUNE=10: no PF (its classes' rows by the plain class, a block a unit), the default
                   again */
                alts[na++] = (kg_norm_tuning){.pf = -1};
                again = na;
                alts[na++] = (kg_norm_tuning){0};
            } else if (tune == 9) {
                /* KG_NORM_TUNE=9: the rows classes' grid at the old cap (32 blocks a multiprocessor), the default
                   again (timed whatever the duplicates), and where BULK serves, LEAN at the default grid and at
                   the old cap */
                alts[na++] = (kg_norm_tuning){.grid = 32 * sms};
                again = na;
                alts[na++] = (kg_norm_tuning){0};
                if (pl.bcfg >= 0) {
                    alts[na++] = (kg_norm_tuning){.bulk = -1};
                    alts[na++] = (kg_norm_tuning){.bulk = -1, .grid = 32 * sms};
                }
            } else if (tune == 8) {
                /* KG_NORM_TUNE=8: LEAN rows at 2, 4 and 8 times the planner's grid cap and at a block for every
                   row group, also in blocks of 128 and 256 threads; PF; LEAN8; 16 and 32 lanes a row */
                const int gcap = 32 * sms;
                for (int t = 0; t <= 256; t = t ? 2 * t : 128)
                    for (int m = t ? 1 : 2; m <= 16; m *= 2)
                        alts[na++] = (kg_norm_tuning){.threads = t, .grid = m == 16 ? 1 << 30 : m * gcap};
                alts[na++] = (kg_norm_tuning){.pf = 1};
                alts[na++] = (kg_norm_tuning){.lean = 8};
                for (int gg = 16; gg <= 32; gg *= 2) {
                    alts[na++] = (kg_norm_tuning){.group = gg};
                    alts[na++] = (kg_norm_tuning){.group = gg, .grid = 1 << 30};
                    alts[na++] = (kg_norm_tuning){.group = gg, .threads = 128, .grid = 1 << 30};
                }
            } else if (tune == 7) {
                /* KG_NORM_TUNE=7: LEAN (no BULK), each BULKW configuration (its deepest ring, then 2 stages),
                   the block BULK configurations 0-2 at 2 stages */
                alts[na++] = (kg_norm_tuning){.bulk = -1};
                for (int k = 1; k <= KG_NORM_BCFG_COUNT; k++)
                    if (kg_norm_bcfgs[k - 1].warp) {
                        alts[na++] = (kg_norm_tuning){.bulk = k};
                        alts[na++] = (kg_norm_tuning){.bulk = k, .bstages = 2};
                        if (kg_norm_bcfgs[k - 1].regs)
                            alts[na++] = (kg_norm_tuning){.bulk = k, .bstages = 1};
                    }
                for (int k = 1; k <= 3; k++)
                    alts[na++] = (kg_norm_tuning){.bulk = k, .bstages = 2};
            } else if (tune == 6) {
                /* KG_NORM_TUNE=6: LEAN groups of a power of two of lanes (g32 -1) and of whole warps (g32
                   1), LEAN (no BULK) */
                alts[na++] = (kg_norm_tuning){.g32 = -1};
                alts[na++] = (kg_norm_tuning){.g32 = 1};
                alts[na++] = (kg_norm_tuning){.bulk = -1};
            } else if (tune == 5) {
                /* KG_NORM_TUNE=5: LEAN (no BULK), each BULK configuration, then with 2 stages */
                alts[na++] = (kg_norm_tuning){.bulk = -1};
                for (int k = 1; k <= KG_NORM_BCFG_COUNT; k++)
                    alts[na++] = (kg_norm_tuning){.bulk = k};
                for (int k = 1; k <= KG_NORM_BCFG_COUNT; k++)
                    alts[na++] = (kg_norm_tuning){.bulk = k, .bstages = 2};
            } else if (tune == 4) {
                /* KG_NORM_TUNE=4: the defaults before PF (pf -1), LEAN16 (blocks of 128 / 512 for warp groups) */
                alts[na++] = (kg_norm_tuning){.pf = -1};
                alts[na++] = (kg_norm_tuning){.lean = 16};
                alts[na++] = (kg_norm_tuning){.lean = 16, .threads = 512};
            } else if (tune == 3) {
                /* KG_NORM_TUNE=3: COLSV, COLS and each CLUSTER
                   configuration (wherever the column fits) */
                alts[na++] = (kg_norm_tuning){.cluster = -1};
                alts[na++] = (kg_norm_tuning){.cluster = -1, .colsv = -1};
                for (int k = 1; k <= KG_NORM_CCFG_COUNT; k++)
                    alts[na++] = (kg_norm_tuning){.cluster = k};
            } else if (tune == 2) {
                /* KG_NORM_TUNE=2: LEAN4 / LEAN8, their variants, blocks of 128 */
                for (int nvx = 4; nvx <= 8; nvx += 4)
                    for (int v = -1; v <= 2; v++) {
                        if (nvx == 4 && v > 0)
                            continue; /* the variants are LEAN8's */
                        alts[na++] = (kg_norm_tuning){.lean = nvx, .variant = v};
                        alts[na++] = (kg_norm_tuning){.lean = nvx, .variant = v, .threads = 128};
                    }
                /* the 2-byte lse ops: LEAN8F, and LEAN4F / LEAN8F at 128 threads */
                alts[na++] = (kg_norm_tuning){.lean = 8, .variant = 3};
                alts[na++] = (kg_norm_tuning){.lean = 8, .variant = 3, .threads = 128};
                /* the residual form: LEAN4_RESC (streaming hints) */
                alts[na++] = (kg_norm_tuning){.variant = 1};
                alts[na++] = (kg_norm_tuning){.variant = 1, .group = 2 * (int)pl.args.group};
                /* 2-byte layer_norm / the residual form: twice the lanes a row */
                alts[na++] = (kg_norm_tuning){.group = 2 * (int)pl.args.group};
                alts[na++] = (kg_norm_tuning){.variant = 2, .group = 2 * (int)pl.args.group};
                /* rows vectors do not tile: LEANU of 4 / 8 vectors a lane (whole-vector folds, then
                   masked folds), STRIDED */
                alts[na++] = (kg_norm_tuning){.leanu = -1};
                alts[na++] = (kg_norm_tuning){.leanu = 4};
                alts[na++] = (kg_norm_tuning){.leanu = 8};
                alts[na++] = (kg_norm_tuning){.usan = -1};
                alts[na++] = (kg_norm_tuning){.leanu = 4, .usan = -1};
                alts[na++] = (kg_norm_tuning){.leanu = 8, .usan = -1};
                /* rows 4-byte words tile: LEANW of 8 / 16 words a lane, or none (LEANU) */
                alts[na++] = (kg_norm_tuning){.leanw = 8};
                alts[na++] = (kg_norm_tuning){.leanw = 16};
                alts[na++] = (kg_norm_tuning){.leanw = -1};
                /* LEAN4 / LEAN8F at blocks of 128 / 512 */
                alts[na++] = (kg_norm_tuning){.lean = 4, .threads = 512};
                alts[na++] = (kg_norm_tuning){.lean = 8, .variant = 3, .threads = 512};
                /* PF: the next row prefetched (LEAN4P, LEAN8P), also with twice the lanes */
                alts[na++] = (kg_norm_tuning){.pf = 1};
                alts[na++] = (kg_norm_tuning){.pf = 1, .lean = 4};
                alts[na++] = (kg_norm_tuning){.pf = 1, .lean = 8};
                alts[na++] = (kg_norm_tuning){.pf = 1, .lean = 4, .group = 2 * (int)pl.args.group};
                alts[na++] = (kg_norm_tuning){.pf = 1, .lean = 4, .threads = 128};
                /* LEAN16 (the 2-byte norms), blocks of 128 / 512 for warp groups */
                alts[na++] = (kg_norm_tuning){.lean = 16};
                alts[na++] = (kg_norm_tuning){.lean = 16, .threads = 128};
                alts[na++] = (kg_norm_tuning){.lean = 16, .threads = 512};
            }
            if (tune == 1) {
                alts[na++] = (kg_norm_tuning){.lean = -1};
                alts[na++] = (kg_norm_tuning){.loose = 1};
                for (int nvx = 4; nvx <= 8; nvx += 4) {
                    for (int gg = 0; gg <= 1024; gg = gg ? gg * 2 : 32)
                        alts[na++] = (kg_norm_tuning){.lean = nvx, .group = gg};
                    alts[na++] = (kg_norm_tuning){.lean = nvx, .loose = 1};
                    alts[na++] = (kg_norm_tuning){.lean = nvx, .threads = 128};
                    alts[na++] = (kg_norm_tuning){.lean = nvx, .threads = 512};
                    for (int v = 1; v <= 2; v++) {
                        alts[na++] = (kg_norm_tuning){.lean = nvx, .variant = v};
                        alts[na++] = (kg_norm_tuning){.lean = nvx, .variant = v, .threads = 128};
                    }
                }
                for (int sp = 1; sp <= 16; sp *= 2)
                    alts[na++] = (kg_norm_tuning){.col_splits = sp};
                alts[na++] = (kg_norm_tuning){.bps = 4};
                alts[na++] = (kg_norm_tuning){.bps = 16};
            }
            kg_norm_plan seen[80];
            int ns = 0;
            seen[ns++] = pl;
            for (int a = 0; a < na; a++) {
                kgi_norm_tuning = alts[a];
                if (kg_norm_plan_call(ctx, &pc, sms, &pl) != KG_OK)
                    continue;
                int dup = 0;
                for (int k = 0; k < ns && !dup; k++)
                    dup = pl.cls == seen[k].cls && pl.grid == seen[k].grid && pl.block == seen[k].block &&
                          pl.args.splits == seen[k].args.splits && pl.args.group == seen[k].args.group &&
                          pl.args.opt == seen[k].args.opt && pl.ccfg == seen[k].ccfg && pl.csize == seen[k].csize &&
                          pl.bcfg == seen[k].bcfg && pl.bstages == seen[k].bstages;
                if (dup && a != again)
                    continue; /* a launch already timed (TUNE=9 / 10: the default is timed again) */
                seen[ns++] = pl;
                const double ut = bench_time_us(ctx, run_case, &r, 6, 3);
                const double gt = bytes / (ut * 1e3);
                printf("  tune lean %d var %d leanu %d usan %d leanw %d loose %d group %d threads %d splits %d bps %d "
                       "pf %d bulk %d bstages %d g32 %d: %10.1f us %8.1f GB/s "
                       "%6.1f%%  cls %d g %d nv %d opt %d splits %lld block %u grid %u cluster %d x %d grid %u "
                       "bulk %d x %d grid %u\n",
                       alts[a].lean, alts[a].variant, alts[a].leanu, alts[a].usan, alts[a].leanw, alts[a].loose,
                       alts[a].group, alts[a].threads, alts[a].col_splits, alts[a].bps, alts[a].pf, alts[a].bulk,
                       alts[a].bstages, alts[a].g32, ut, gt, 100 * gt / copy, (int)pl.cls, pl.args.group, pl.args.nv, pl.args.opt,
                       (long long)pl.args.splits, pl.block, pl.grid, pl.ccfg, pl.csize, pl.cgrid, pl.bcfg, pl.bstages,
                       pl.bgrid);
            }
            kgi_norm_tuning = tuned;
            fflush(stdout);
        }
        if (csv)
            fprintf(csv, "%s,\"%s\",%s,%lld,%.3f,%.1f\n", sweep ? "norm-sweep" : "norm", c->name, kg_dtype_name(dt),
                    (long long)n, us, gbps);
        if (csv)
            fflush(csv); /* a run cut by its timeout keeps the cases done */
    }
    if (nsweep > 0) {
        /* worst and median %copy of the seeded cases (a failed check counts 0) */
        for (int a = 1; a < nsweep; a++)
            for (int b = a; b > 0 && sweep_pct[b - 1] > sweep_pct[b]; b--) {
                const double t = sweep_pct[b];
                sweep_pct[b] = sweep_pct[b - 1];
                sweep_pct[b - 1] = t;
            }
        printf("# seeded sweep (KG_NORM_RAND=%s): %d cases, worst %.1f%% median %.1f%% best %.1f%% of copy\n",
               getenv("KG_NORM_RAND"), nsweep, sweep_pct[0], sweep_pct[nsweep / 2], sweep_pct[nsweep - 1]);
    }
    /* KG_NORM_SWEEP=1: the packed classes and grid sizes for short rows,
       grid sizes for rows (the planner's defaults are what the table above
       used; the 2026-12-01 sweep chose them) */
    if (getenv("KG_NORM_SWEEP")) {
        int sms = 132;
        char dn[128];
        int ma, mi;
        BENCH_CHECK(ctx, kg_device_info(ctx, dn, sizeof dn, &ma, &mi, &sms));
        static const bcase sw[] = {
            {"sweep softmax [4194304,64]", KG_NORM_SOFTMAX, KG_F32, 4194304, 64, 1, 0, 0},
            {"sweep softmax [4194304,32]", KG_NORM_SOFTMAX, KG_F32, 4194304, 32, 1, 0, 0},
            {"sweep softmax [65536,4096]", KG_NORM_SOFTMAX, KG_F32, 65536, 4096, 1, 0, 0},
            {"sweep softmax [16384,16384]", KG_NORM_SOFTMAX, KG_F32, 16384, 16384, 1, 0, 0},
            {"sweep rms_norm [65536,4096]", KG_NORM_RMS_NORM, KG_BF16, 65536, 4096, 1, 0, 0},
        };
        for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
            const bcase *c = &sw[i];
            const size_t es = kg_dtype_size(c->dt);
            if (filled != c->dt) {
                for (int64_t k = 0; k < PATTERN; k++)
                    kt_set(blk, c->dt, k, kt_uniform(&rng, -4, 4));
                fill(ctx, din, c->dt, max_el, blk);
                for (int64_t k = 0; k < 16384; k++)
                    kt_set(wh, c->dt, k, kt_uniform(&rng, 0.5, 1.5));
                BENCH_CHECK(ctx, kg_copy_in(ctx, dw, wh, 16384 * es));
                filled = c->dt;
            }
            const int64_t shape[2] = {c->rows, c->cols};
            kg_tensor in = kg_tensor_contiguous(din, c->dt, 2, shape),
                      out = kg_tensor_contiguous(dout, c->dt, 2, shape);
            kg_tensor w = kg_tensor_contiguous(dw, c->dt, 1, &c->cols);
            kg_norm_call call = {.op = c->op,
                                 .in = &in,
                                 .out = &out,
                                 .axis = -1,
                                 .k = 1,
                                 .eps = 1e-6,
                                 .w = c->op == KG_NORM_RMS_NORM ? &w : NULL};
            kg_norm_plan base;
            BENCH_CHECK(ctx, kg_norm_plan_call(ctx, &call, sms, &base));
            const int packed = base.cls == KG_NORM_PACKED;
            const int caps[] = {1, 2, 4, 8, 16, 32};
            for (int ci = 0; ci < 6; ci++) {
                sweep_arg a = {ctx, call, base};
                const int R = packed ? KG_NORM_PACK : 1;
                const int64_t per_block =
                    a.plan.block > 32 && a.plan.args.group > 32 ? 1 : a.plan.block / a.plan.args.group;
                const int64_t units = (c->rows + per_block * R - 1) / (per_block * R);
                const int64_t cap = (int64_t)caps[ci] * sms;
                a.plan.grid = (unsigned)(units < cap ? units : cap);
                const double us = bench_time_us(ctx, run_plan, &a, 10, 7);
                const double gbps = 2.0 * (double)(c->rows * c->cols) * (double)es / (us * 1e3);
                printf("%-30s %-5s %-8s group %4d nv %d block %4u grid %6u: %8.1f us %7.1f GB/s %5.1f%%%s\n", c->name,
                       kg_dtype_name(c->dt), packed ? "packed" : "rows", a.plan.args.group, a.plan.args.nv,
                       a.plan.block, a.plan.grid, us, gbps, 100 * gbps / copy,
                       a.plan.grid == base.grid && a.plan.cls == base.cls ? " (default)" : "");
            }
        }
    }
    if (csv)
        fclose(csv);
    kg_free(ctx, din);
    kg_free(ctx, dout);
    kg_free(ctx, dres);
    kg_free(ctx, dw);
    kg_free(ctx, db);
    free(blk);
    free(rblk);
    free(wh);
    free(bh);
    kg_close(ctx);
    return failed;
}
