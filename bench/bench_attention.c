/*
 * bench_attention.c - kg_attention on the cases of issue 5: bf16 and f16,
 * D 64 and 128, Sq = Sk in {1024, 4096, 16384} with B x S = 32768 and 16
 * heads, causal and not; f32 [2,16,4096,128]; the seed's [2,8,128,64] f32
 * causal (latency). TFLOP/s counts 4 B Hq D per visible (query, key) pair
 * (causal: bottom-right).
 *
 * Each case is checked before it is timed: a few rows against a float64 CPU
 * reference. Rows go to $KG_BENCH_CSV for bench/torch_attention.py:
 *   attention,<dtype>,B,H,S,D,causal,us,tflops
 * Set KG_BENCH_FILTER=<'|'-separated substrings of "dtype D S causal Hq Hkv Sq
 * Sk kind", kind one of prefill / decode / sweep (the seeded prefill sweep)>
 * to run a subset; KG_BENCH_VARIANTS=1 times every variant of each prefill
 * row (=hopper: the Hopper ones only), and with KG_BENCH_QUEUE=1 each
 * persistent one again with its work queue the other way; KG_BENCH_VS=<','-
 * separated variant names> times the default and those variants in turn,
 * three rounds; KG_BENCH_SWEEP_SEED and
 * KG_BENCH_SWEEP_N (at most 40) choose the seeded sweep's seed and size,
 * KG_BENCH_ROWS=<dtype:B:Hq:Hkv:S:D:causal,...> adds those prefill rows;
 * KG_BENCH_DEC_SEED and KG_BENCH_DEC_N (at most 24) those of the seeded
 * decode sweep (its rows' names also hold "dseed"), KG_BENCH_DEC_DIM one
 * head dim for all its rows, KG_BENCH_DEC_MINBH its rows of at least that
 * many B x Hkv (K+V up to 2.2 GB), KG_BENCH_DEC_SMALL=<MB> small grids
 * instead (B x Hkv up to 16, groups 1-32, Sk 1000-65536, K+V up to MB);
 * KG_BENCH_DEC_ROWS=<dtype:B:Hq:Hkv:Sk:D,...> those decode rows too;
 * KG_BENCH_XORDER=1 times each persistent Hopper prefill row's default and
 * session 30's schedules in turn: "old" (the order and claim before session
 * 30), forced: causal, "xorder" (tiles ordered across batches), "late" (the
 * next tile taken once the current one's loads are issued) and "both"; not
 * causal, "late"; KG_BENCH_PTRACE=1 prints each
 * Hopper prefill row's per-block and per-tile trace (ptrace_call; each of
 * those configurations where they were timed);
 * KG_BENCH_DEC_FILL=1 times short-query
 * rows again without the planner's fill of waves; KG_BENCH_DEC_SPREAD=1
 * times short-query rows again with the one-block-per-multiprocessor
 * padding off and on, KG_BENCH_SPLITS, KG_BENCH_COMBINE and KG_BENCH_LANES
 * with other splits, merges and merge lanes, KG_BENCH_DECVS in other
 * decode configurations (dec_configs).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "attn_plan.h"
#include "internal.h"
#include "kg_attention.h"
#include "kg_attn_table.h"
#include "kg_test.h"

typedef struct {
    kg_context *ctx;
    kg_tensor q, k, v, out, lse;
    kg_attention_opts opts;
} call_t;

static void run(void *arg)
{
    call_t *c = arg;
    BENCH_CHECK(c->ctx, kg_attention(c->ctx, &c->out, &c->lse, &c->q, &c->k, &c->v, NULL, &c->opts));
}

/* Checks rows of (b, h) = (last, last) and (0, 0) against float64 (q, out
   [B,Hq,Sq,D]; k, v [B,Hkv,Sk,D]; causal bottom-right). */
static int check(const call_t *c, const void *hq, const void *hk, const void *hv, int B, int Hq, int Hkv, int Sq,
                 int Sk, int D)
{
    const kg_dtype dt = c->q.dtype;
    const size_t es = kg_dtype_size(dt);
    const int64_t n = (int64_t)B * Hq * Sq * D;
    void *ho = malloc(n * es);
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, ho, c->out.data, n * es));
    double *s = malloc(sizeof(double) * Sk), worst = 0;
    /* the (b, kv head)'s K and V as doubles, once (kt_get per product is slow at 32k keys) */
    double *xk = malloc(sizeof(double) * Sk * D), *xv = malloc(sizeof(double) * Sk * D), *xq = malloc(sizeof(double) * D);
    const double scale = 1.0 / sqrt((double)D);
    const int rows[4] = {0, Sq > 1 ? 1 : 0, Sq / 2, Sq - 1};
    for (int bh = 0; bh < 2; bh++) {
        const int b = bh ? B - 1 : 0, h = bh ? Hq - 1 : 0, kh = h / (Hq / Hkv);
        const int64_t qb = ((int64_t)b * Hq + h) * Sq * D, kb = ((int64_t)b * Hkv + kh) * Sk * D;
        for (int64_t e = 0; e < (int64_t)Sk * D; e++) {
            xk[e] = kt_get(hk, dt, kb + e);
            xv[e] = kt_get(hv, dt, kb + e);
        }
        for (int r = 0; r < 4; r++) {
            const int i = rows[r];
            if ((r > 0 && i == rows[r - 1]) || (r > 1 && i == rows[r - 2])) /* (rows repeat where Sq < 4) */
                continue;
            double m = -INFINITY, l = 0;
            const int nk = c->opts.causal ? i + 1 + Sk - Sq : Sk;
            for (int d = 0; d < D; d++)
                xq[d] = kt_get(hq, dt, qb + (int64_t)i * D + d);
            for (int j = 0; j < nk; j++) {
                double dot = 0;
                for (int d = 0; d < D; d++)
                    dot += xq[d] * xk[(int64_t)j * D + d];
                s[j] = dot * scale;
                m = s[j] > m ? s[j] : m;
            }
            for (int j = 0; j < nk; j++)
                l += (s[j] = exp(s[j] - m));
            for (int d = 0; d < D; d++) {
                double o = 0;
                for (int j = 0; j < nk; j++)
                    o += s[j] * xv[(int64_t)j * D + d];
                const double err = fabs(o / l - kt_get(ho, dt, qb + (int64_t)i * D + d));
                worst = err > worst ? err : worst;
            }
        }
    }
    free(s);
    free(xk);
    free(xv);
    free(xq);
    free(ho);
    const double tol = dt == KG_F32 ? 1e-5 : dt == KG_F16 ? 2e-3 : 1.6e-2;
    if (!(worst <= tol)) {
        fprintf(stderr, "%s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d causal=%d: max error %.3g over checked rows > %.3g\n",
                kg_dtype_name(dt), B, Hq, Hkv, Sq, Sk, D, c->opts.causal, worst, tol);
        return 0;
    }
    return 1;
}

typedef struct {
    kg_dtype dt;
    int B, Hq, Hkv, Sq, Sk, D, causal;
} bcase;

/* 1 when name contains one of the '|'-separated parts of filter. */
static int matches(const char *name, const char *filter)
{
    char part[96];
    for (const char *p = filter;;) {
        const char *e = strchr(p, '|');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n < sizeof part) {
            memcpy(part, p, n);
            part[n] = 0;
            if (strstr(name, part))
                return 1;
        }
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* Random inputs: chunks of a pool of uniform(-1, 1) values at random offsets
   (rounding every element through kt_set is slow). */
static void *fill(kg_context *ctx, kg_dtype dt, int64_t n, uint64_t *rng, void **dev)
{
    const size_t es = kg_dtype_size(dt);
    enum { POOL = 1 << 20, CHUNK = 4096 };
    unsigned char *pool = malloc((size_t)(POOL + CHUNK) * es);
    for (int64_t e = 0; e < POOL + CHUNK; e++)
        kt_set(pool, dt, e, kt_uniform(rng, -1, 1));
    void *h = malloc(n * es);
    for (int64_t e = 0; e < n; e += CHUNK) {
        const int64_t len = n - e < CHUNK ? n - e : CHUNK;
        memcpy((char *)h + e * es, pool + (kt_next(rng) % POOL) * es, (size_t)len * es);
    }
    free(pool);
    BENCH_CHECK(ctx, kg_malloc(ctx, dev, n * es));
    BENCH_CHECK(ctx, kg_copy_in(ctx, *dev, h, n * es));
    return h;
}

static int is_decode_variant(int v)
{
    return v == KG_ATTN_V_DECODE || v == KG_ATTN_V_DECODE2 || v == KG_ATTN_V_DECODE4;
}

static int cmp_u64(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* $KG_BENCH_TMA: the call timed as the runtime runs it, then with the
   Hopper and decode kernels' bulk tensor copies off (cp.async), printed as
   " <name> <tma> / cp.async <us>" */
static void tma_pair(kg_context *ctx, call_t *c, int inner, const char *name)
{
    run(c);
    const int on = kg_test_last_attn_tma();
    const double t1 = bench_time_us(ctx, run, c, inner, 5);
    kg_test_attn_tma(-1);
    run(c);
    const double t0 = bench_time_us(ctx, run, c, inner, 5);
    kg_test_attn_tma(0);
    printf(" %s %s %.1f / cp.async %.1f us", name, on ? "tma" : "(no tma)", t1, t0);
}

/* $KG_BENCH_TRACE: one decode call with the trace hook on: each block's
   globaltimer stamps (start, end of its keys, end; merged) summarized against
   the first start: the kernel's span, the start skew, the spread of the
   blocks' key-stream ends and the longest merge. */
static void trace_call(call_t *c, double event_us)
{
    enum { MAXB = 1 << 18 };
    unsigned long long *dt;
    BENCH_CHECK(c->ctx, kg_malloc(c->ctx, (void **)&dt, (size_t)MAXB * 32));
    BENCH_CHECK(c->ctx, kg_memset(c->ctx, dt, 0, (size_t)MAXB * 32));
    kg_test_attn_trace(c->ctx, dt);
    for (int i = 0; i < 3; i++) /* the last of three back-to-back calls */
        run(c);
    kg_test_attn_trace(c->ctx, NULL);
    unsigned long long *h = malloc((size_t)MAXB * 32), *ends = malloc((size_t)MAXB * 8);
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, h, dt, (size_t)MAXB * 32));
    unsigned long long t0 = ~0ull, smax = 0, emax = 0, mmax = 0;
    int n = 0, nm = 0;
    for (int i = 0; i < MAXB && h[4 * i]; i++, n++) {
        t0 = h[4 * i] < t0 ? h[4 * i] : t0;
        smax = h[4 * i] > smax ? h[4 * i] : smax;
        emax = h[4 * i + 2] > emax ? h[4 * i + 2] : emax;
        ends[n] = h[4 * i + 1];
        if (h[4 * i + 3]) {
            nm++;
            mmax = h[4 * i + 2] - h[4 * i + 1] > mmax ? h[4 * i + 2] - h[4 * i + 1] : mmax;
        }
    }
    if (n > 0) {
        qsort(ends, n, 8, cmp_u64);
        printf("      trace: %d blocks, span %.1f us (event %.1f), start skew %.1f, key ends min/med/max %.1f / %.1f "
               "/ %.1f, %d merges, longest %.1f us\n",
               n, (emax - t0) / 1e3, event_us, (smax - t0) / 1e3, (ends[0] - t0) / 1e3, (ends[n / 2] - t0) / 1e3,
               (ends[n - 1] - t0) / 1e3, nm, mmax / 1e3);
    }
    free(h);
    free(ends);
    kg_free(c->ctx, dt);
}

/* A Hopper prefill launch's trace (attention_sm90.cuh: 4 words a block:
   start, consumers' start, end, work tiles; persistent, after the grid's
   blocks: 4 words a work tile: when the producer took it, when the
   consumers were done with its key tiles, the block, its key tiles), the
   last of three back-to-back calls, relative to its first block's start,
   us. Per block: start skew, ends, tiles a block. Per tile (persistent:
   `grid` blocks, `units` tiles): its time (consumers done minus the same
   block's tile before, or minus the block's start) by key tiles, the
   block's first tile apart from the later ones (the first wave: every
   block loading at once), a least-squares line through the later ones,
   and the last tiles to end. */
static void ptrace_call(call_t *c, const char *label, double event_us, int grid, int units)
{
    enum { MAXB = 1 << 16 };
    unsigned long long *dt;
    BENCH_CHECK(c->ctx, kg_malloc(c->ctx, (void **)&dt, (size_t)MAXB * 32));
    BENCH_CHECK(c->ctx, kg_memset(c->ctx, dt, 0, (size_t)MAXB * 32));
    kg_test_attn_trace(c->ctx, dt);
    for (int i = 0; i < 3; i++)
        run(c);
    kg_test_attn_trace(c->ctx, NULL);
    unsigned long long *h = malloc((size_t)MAXB * 32), *ends = malloc((size_t)MAXB * 8);
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, h, dt, (size_t)MAXB * 32));
    unsigned long long t0 = ~0ull, smax = 0, tmin = ~0ull, tmax = 0;
    int n = 0;
    const int nb = grid > 0 ? grid : MAXB;
    for (int i = 0; i < nb && i < MAXB && h[4 * i]; i++, n++) {
        t0 = h[4 * i] < t0 ? h[4 * i] : t0;
        smax = h[4 * i] > smax ? h[4 * i] : smax;
        ends[n] = h[4 * i + 2];
        tmin = h[4 * i + 3] < tmin ? h[4 * i + 3] : tmin;
        tmax = h[4 * i + 3] > tmax ? h[4 * i + 3] : tmax;
    }
    const double us = 1e-3;
    if (n > 0) {
        qsort(ends, n, 8, cmp_u64);
        printf("      trace %s: %d blocks, span %.1f us (event %.1f a call), start skew %.1f, ends min/med/max "
               "%.1f / %.1f / %.1f, tiles a block %llu-%llu\n",
               label, n, (ends[n - 1] - t0) * us, event_us, (smax - t0) * us, (ends[0] - t0) * us,
               (ends[n / 2] - t0) * us, (ends[n - 1] - t0) * us, tmin, tmax);
    }
    /* per tile (persistent launches whose tiles fit the buffer) */
    if (n == grid && grid > 0 && units > 0 && (int64_t)grid + units <= MAXB) {
        const unsigned long long *w = h + 4 * (size_t)grid;
        enum { MAXK = 64 };
        double sum[2][MAXK] = {{0}}, mn[2][MAXK], mx[2][MAXK];
        int cnt[2][MAXK] = {{0}}, bad = 0, last[3] = {-1, -1, -1};
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int sn = 0;
        for (int t = 0; t < units; t++) {
            const unsigned long long b = w[4 * t + 2], k = w[4 * t + 3];
            if (!w[4 * t] || !w[4 * t + 1] || b >= (unsigned long long)grid || k >= MAXK) {
                bad++;
                continue;
            }
            /* the same block's tile that ended last before this one */
            unsigned long long prev = h[4 * b];
            int first = 1;
            for (int u = 0; u < units; u++)
                if (u != t && w[4 * u + 2] == b && w[4 * u + 1] < w[4 * t + 1] && w[4 * u + 1] >= prev)
                    prev = w[4 * u + 1], first = 0;
            const double d = (w[4 * t + 1] - prev) * us;
            const int f = first ? 0 : 1;
            if (!cnt[f][k])
                mn[f][k] = mx[f][k] = d;
            mn[f][k] = d < mn[f][k] ? d : mn[f][k];
            mx[f][k] = d > mx[f][k] ? d : mx[f][k];
            sum[f][k] += d;
            cnt[f][k]++;
            if (f)
                sx += k, sy += d, sxx += (double)k * k, sxy += k * d, sn++;
            for (int j = 0; j < 3; j++)
                if (last[j] < 0 || w[4 * t + 1] > w[4 * last[j] + 1]) {
                    for (int q = 2; q > j; q--)
                        last[q] = last[q - 1];
                    last[j] = t;
                    break;
                }
        }
        printf("      tiles %s: %d tiles (%d not traced); time a tile by key tiles, us, first tile of a block / "
               "later ones: mean (min-max) n\n",
               label, units, bad);
        for (int k = 0; k < MAXK; k++) {
            if (!cnt[0][k] && !cnt[1][k])
                continue;
            printf("        %2d keys:", k);
            for (int f = 0; f < 2; f++)
                if (cnt[f][k])
                    printf(" %s %.2f (%.2f-%.2f) %d", f ? "| later" : "first", sum[f][k] / cnt[f][k], mn[f][k],
                           mx[f][k], cnt[f][k]);
                else
                    printf(" %s -", f ? "| later" : "first");
            printf("\n");
        }
        const double den = sn * sxx - sx * sx;
        if (sn > 1 && den > 0) {
            const double a = (sn * sxy - sx * sy) / den, b0 = (sy - a * sx) / sn;
            printf("        later tiles' fit: %.2f us a key tile + %.2f a tile (%d tiles)\n", a, b0, sn);
        }
        printf("        last to end:");
        for (int j = 0; j < 3; j++)
            if (last[j] >= 0) {
                const unsigned long long *x = w + 4 * last[j];
                printf(" tile %d (%llu keys, block %llu, taken %.1f, done %.1f)", last[j], x[3], x[2],
                       (x[0] - t0) * us, (x[1] - t0) * us);
            }
        printf("\n");
    }
    free(h);
    free(ends);
    kg_free(c->ctx, dt);
}

/* Sets the decode hooks to one configuration of $KG_BENCH_DECVS (','-
   separated words: def, stN, pair, prule, nopair, late, early, comb, fused,
   tail, spon, spoff, rN, rows, cN, sN, xN, dN; see dec_configs), from the
   runtime's choices; planned: the planner's splits. */
static void dec_config(kg_context *ctx, const char *x, size_t n, int planned)
{
    kg_test_attn_dec_stages(0);
    kg_test_attn_dec_late(0);
    kg_test_force_attn_combine(ctx, 0);
    kg_test_force_attn_splits(ctx, 0);
    kg_test_attn_dec_spread(0);
    kg_test_force_attn_variant(ctx, -1);
    kg_test_attn_dec_tile(0);
    kg_test_attn_dec_chunk(0);
    kg_test_attn_dec_host(0);
    kg_test_attn_dec_kflags(0);
    kg_test_attn_dec_pair(0);
    kg_test_attn_pdl(ctx, 1);
    while (n > 0) {
        const char *e = memchr(x, ',', n);
        const size_t l = e ? (size_t)(e - x) : n;
        const int v = atoi(x + 1 + (l > 1 && x[1] == 't'));
        if (l >= 3 && !strncmp(x, "st", 2))
            kg_test_attn_dec_stages(v > 0 ? v : -1);
        else if (l == 4 && !strncmp(x, "late", 4))
            kg_test_attn_dec_late(1);
        else if (l == 5 && !strncmp(x, "early", 5))
            kg_test_attn_dec_late(-1);
        else if (l == 4 && !strncmp(x, "comb", 4))
            kg_test_force_attn_combine(ctx, 2);
        else if (l == 5 && !strncmp(x, "fused", 5))
            kg_test_force_attn_combine(ctx, 1);
        else if (l == 4 && !strncmp(x, "tail", 4))
            kg_test_force_attn_combine(ctx, 3);
        else if (l == 4 && !strncmp(x, "spon", 4))
            kg_test_attn_dec_spread(1);
        else if (l == 5 && !strncmp(x, "spoff", 5))
            kg_test_attn_dec_spread(-1);
        else if (l == 3 && x[0] == 'r' && (v == 16 || v == 32 || v == 64)) {
            const kg_attn_variant rv[3] = {KG_ATTN_V_DECODE, KG_ATTN_V_DECODE2, KG_ATTN_V_DECODE4};
            kg_test_force_attn_variant(ctx, rv[v / 32]);
        } else if (l == 4 && !strncmp(x, "rows", 4))
            kg_test_attn_dec_tile(-1);
        else if (l == 5 && !strncmp(x, "host0", 5))
            kg_test_attn_dec_host(-1);
        else if (l == 5 && !strncmp(x, "host1", 5))
            kg_test_attn_dec_host(1);
        else if (l >= 2 && x[0] == 'k' && x[1] >= '0' && x[1] <= '9')
            kg_test_attn_dec_kflags(v > 0 ? v : -1);
        else if (l == 5 && !strncmp(x, "nopdl", 5))
            kg_test_attn_pdl(ctx, 0);
        else if (l == 4 && !strncmp(x, "pair", 4))
            kg_test_attn_dec_pair(1);
        else if (l == 5 && !strncmp(x, "prule", 5))
            kg_test_attn_dec_pair(2);
        else if (l == 6 && !strncmp(x, "nopair", 6))
            kg_test_attn_dec_pair(-1);
        else if (l >= 2 && x[0] == 'c' && x[1] >= '0' && x[1] <= '9')
            kg_test_attn_dec_chunk(v > 0 ? v : -1);
        else if (l >= 2 && x[0] == 's')
            kg_test_force_attn_splits(ctx, v);
        else if (l >= 2 && x[0] == 'x')
            kg_test_force_attn_splits(ctx, v * planned);
        else if (l >= 2 && x[0] == 'd' && v > 0)
            kg_test_force_attn_splits(ctx, planned / v > 0 ? planned / v : 1);
        x += l + (e ? 1 : 0);
        n -= l + (e ? 1 : 0);
    }
}

/* The host's time to enqueue one call, us: `inner` calls without a sync
   (the device queue does not fill), the fastest of `reps`. */
static double host_us(call_t *c, int inner, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        BENCH_CHECK(c->ctx, kg_sync(c->ctx));
        const double t0 = bench_now();
        for (int i = 0; i < inner; i++)
            run(c);
        const double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    return best * 1e6 / inner;
}

/* The device's time per call, us, without the host's launch costs: `n`
   calls captured in one CUDA graph (programmatic launches become
   programmatic edges), replayed `reps` times, the fastest; -1 where the
   capture fails. */
static double graph_us(call_t *c, int n, int reps)
{
    static cudaStream_t s;
    if (!s && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return -1;
    BENCH_CHECK(c->ctx, kg_set_stream(c->ctx, (kg_stream)s));
    run(c); /* the stream's scratch, outside the capture */
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    double best = -1;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        for (int i = 0; i < n; i++)
            run(c);
        if (cudaStreamEndCapture(s, &g) == cudaSuccess) {
            if (cudaGraphInstantiate(&ge, g, 0) == cudaSuccess) {
                cudaEvent_t e0, e1;
                cudaEventCreate(&e0);
                cudaEventCreate(&e1);
                cudaGraphLaunch(ge, s); /* warm-up */
                for (int r = 0; r < reps; r++) {
                    cudaEventRecord(e0, s);
                    cudaGraphLaunch(ge, s);
                    cudaEventRecord(e1, s);
                    cudaEventSynchronize(e1);
                    float ms = 0;
                    cudaEventElapsedTime(&ms, e0, e1);
                    const double t = 1000.0 * ms / n;
                    best = best < 0 || t < best ? t : best;
                }
                cudaEventDestroy(e0);
                cudaEventDestroy(e1);
                cudaGraphExecDestroy(ge);
            }
            cudaGraphDestroy(g);
        }
    }
    cudaGetLastError();
    BENCH_CHECK(c->ctx, kg_sync(c->ctx));
    BENCH_CHECK(c->ctx, kg_set_stream(c->ctx, NULL));
    return best;
}

/* $KG_BENCH_DECVS=<';'-separated configurations, each ','-separated words:
   def (the runtime's choices), stN (N stages on bulk tensor copies; st0
   the kernel's own), pair (session 31's launch of two 64-row blocks a
   multiprocessor forced wherever it applies, kg_test_attn_dec_pair),
   prule (pair where session 33's kg_attn_dec_pair_rule takes it: the
   runtime's choice since round s34r1, as def), nopair (never: the launch
   before), late /
   early (the decode kernel's PDL trigger after / before its wait), comb /
   fused / tail (the merge: the combine kernel, the last block, the last
   blocks of each row tile), spon / spoff (the one-block-per-multiprocessor padding), r16 /
   r32 / r64 (the decode variant of that many packed rows), host0 / host1 (the
   host path before session 21; the new one with the runtime's launches;
   kg_test_attn_dec_host), kN (the kernels' bits N, kg_test_attn_dec_kflags;
   k0 none), nopdl (launches without programmatic dependent launch), rows (the
   tile by the rows alone, the rule before session 20), cN (the planner's fewest keys per
   valid row of a split; c0 none), sN (N splits),
   xN / dN (the planner's count times / over N)>: the
   short-query row in each configuration in turn, three rounds, the fastest
   round of each; each configuration's bits first compared with the first
   configuration's ('=': the same bits), and checked against float64 where
   they differ. Prints what
   each took (stages, merge 1 fused / 2 combine, splits, late); with
   $KG_BENCH_TRACE also each one's per-block trace (trace_call). */
static int dec_configs(call_t *c, const char *spec, int inner, const void *hq, const void *hk, const void *hv, int B,
                       int Hq, int Hkv, int Sq, int Sk, int D)
{
    enum { MAXC = 12 };
    const char *cf[MAXC];
    size_t cl[MAXC];
    int nc = 0, ok = 1;
    for (const char *x = spec; *x && nc < MAXC;) {
        const char *e = strchr(x, ';');
        cf[nc] = x;
        cl[nc++] = e ? (size_t)(e - x) : strlen(x);
        x = e ? e + 1 : x + strlen(x);
    }
    run(c);
    const int planned = kg_test_last_attn_splits(c->ctx);
    const size_t ob = (size_t)B * Hq * Sq * D * kg_dtype_size(c->q.dtype);
    unsigned char *o0 = malloc(ob), *o1 = malloc(ob);
    double best[MAXC];
    printf("      configs (planner %d splits):", planned);
    for (int i = 0; i < nc; i++) {
        dec_config(c->ctx, cf[i], cl[i], planned);
        BENCH_CHECK(c->ctx, kg_memset(c->ctx, c->out.data, 0xff, ob));
        run(c);
        BENCH_CHECK(c->ctx, kg_sync(c->ctx));
        BENCH_CHECK(c->ctx, kg_copy_out(c->ctx, i ? o1 : o0, c->out.data, ob));
        const int same = i && !memcmp(o0, o1, ob);
        if (!same && !check(c, hq, hk, hv, B, Hq, Hkv, Sq, Sk, D))
            ok = 0;
        printf(" [%.*s: %s st %d m %d s %d l %d sp %d pr %d%s]", (int)cl[i], cf[i],
               kg_attn_variant_names[kg_test_last_attn_variant(c->ctx)], kg_test_last_attn_dec_stages(),
               kg_test_last_attn_combine(c->ctx), kg_test_last_attn_splits(c->ctx), kg_test_last_attn_dec_late(),
               kg_test_last_attn_dec_spread(), kg_test_last_attn_dec_pair(), same ? " =" : "");
        best[i] = 1e30;
    }
    printf("\n      times:");
    /* $KG_BENCH_DEC_HOST=1: each configuration's host enqueue time per call
       and its device time per call in a CUDA graph too (host_us, graph_us) */
    const int hostt = getenv("KG_BENCH_DEC_HOST") && atoi(getenv("KG_BENCH_DEC_HOST")) == 1;
    double hb[MAXC], gb[MAXC];
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < nc; i++) {
            dec_config(c->ctx, cf[i], cl[i], planned);
            const double t = bench_time_us(c->ctx, run, c, inner, 5);
            best[i] = t < best[i] ? t : best[i];
            if (hostt) {
                const double h = host_us(c, inner, 3), g = graph_us(c, 50, 3);
                hb[i] = r == 0 || h < hb[i] ? h : hb[i];
                gb[i] = r == 0 || g < gb[i] ? g : gb[i];
            }
        }
    for (int i = 0; i < nc; i++)
        printf(" %.*s %.2f", (int)cl[i], cf[i], best[i]);
    if (hostt) {
        printf("\n      host enqueue / graph us a call:");
        for (int i = 0; i < nc; i++)
            printf(" %.*s %.2f / %.2f", (int)cl[i], cf[i], hb[i], gb[i]);
    }
    printf("\n");
    for (int i = 0; i < nc && getenv("KG_BENCH_TRACE"); i++) { /* each configuration's per-block trace */
        dec_config(c->ctx, cf[i], cl[i], planned);
        printf("      %.*s", (int)cl[i], cf[i]);
        trace_call(c, best[i]);
    }
    fflush(stdout);
    dec_config(c->ctx, "", 0, planned);
    free(o0);
    free(o1);
    return ok;
}

int main(void)
{
    kg_context *ctx = bench_open("bench_attention");
    FILE *csv = bench_csv_open();
    const char *filter = getenv("KG_BENCH_FILTER");
    bcase cases[200];
    int nc = 0;
    const kg_dtype tc[2] = {KG_BF16, KG_F16};
    for (int t = 0; t < 2; t++)
        for (int D = 64; D <= 128; D += 64)
            for (int S = 1024; S <= 16384; S *= 4)
                for (int causal = 0; causal < 2; causal++)
                    cases[nc++] = (bcase){tc[t], 32768 / S, 16, 16, S, S, D, causal};
    for (int causal = 0; causal < 2; causal++)
        cases[nc++] = (bcase){KG_F32, 2, 16, 16, 4096, 4096, 128, causal};
    cases[nc++] = (bcase){KG_F32, 2, 8, 8, 128, 128, 64, 1};
    /* f32 at the other head dims and lengths */
    cases[nc++] = (bcase){KG_F32, 4, 16, 16, 4096, 4096, 64, 0};
    cases[nc++] = (bcase){KG_F32, 8, 16, 16, 1024, 1024, 128, 1};
    cases[nc++] = (bcase){KG_F32, 4, 16, 16, 4096, 4096, 96, 0};
    cases[nc++] = (bcase){KG_F32, 8, 16, 16, 4096, 4096, 32, 1};
    cases[nc++] = (bcase){KG_F32, 2, 16, 16, 4096, 4096, 256, 1};
    /* every head dim; GQA prefill; long */
    cases[nc++] = (bcase){KG_BF16, 8, 16, 16, 4096, 4096, 32, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 16, 16, 4096, 4096, 32, 1};
    cases[nc++] = (bcase){KG_BF16, 4, 32, 8, 4096, 4096, 64, 1};
    cases[nc++] = (bcase){KG_BF16, 4, 16, 16, 4096, 4096, 96, 0};
    cases[nc++] = (bcase){KG_BF16, 2, 16, 16, 4096, 4096, 256, 1};
    /* D 256 not causal (f2 on the grid kernel since session 22) */
    cases[nc++] = (bcase){KG_BF16, 2, 16, 16, 4096, 4096, 256, 0};
    cases[nc++] = (bcase){KG_BF16, 4, 32, 8, 4096, 4096, 128, 1};
    cases[nc++] = (bcase){KG_BF16, 4, 16, 16, 8192, 8192, 128, 0};
    /* decode and chunked prefill: Sq 1 / 4 / 16 / 512 against Sk 4k..32k, GQA 4:1 and 8:1 */
    const int dsk[3] = {4096, 8192, 32768};
    for (int i = 0; i < 3; i++) {
        const int B = 65536 / dsk[i] > 8 ? 8 : 65536 / dsk[i] < 1 ? 1 : 65536 / dsk[i];
        cases[nc++] = (bcase){KG_BF16, B, 32, 8, 1, dsk[i], 128, 0};
        cases[nc++] = (bcase){KG_BF16, B, 64, 8, 1, dsk[i], 128, 0};
    }
    cases[nc++] = (bcase){KG_BF16, 1, 32, 8, 1, 32768, 128, 0};
    cases[nc++] = (bcase){KG_BF16, 16, 32, 8, 1, 4096, 128, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 32, 8, 1, 8192, 64, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 32, 8, 1, 8192, 32, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 32, 8, 1, 8192, 96, 0};
    cases[nc++] = (bcase){KG_BF16, 4, 16, 4, 1, 8192, 256, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 32, 1, 1, 8192, 128, 0}; /* MQA */
    cases[nc++] = (bcase){KG_F16, 8, 32, 8, 1, 8192, 128, 0};
    for (int sq = 4; sq <= 16; sq *= 4) {
        cases[nc++] = (bcase){KG_BF16, 8, 32, 8, sq, 8192, 128, 1};
        cases[nc++] = (bcase){KG_BF16, 8, 64, 8, sq, 8192, 128, 1};
        cases[nc++] = (bcase){KG_BF16, 1, 32, 8, sq, 32768, 128, 1};
    }
    cases[nc++] = (bcase){KG_BF16, 1, 32, 1, 1, 32768, 128, 0};  /* MQA, one sequence */
    cases[nc++] = (bcase){KG_BF16, 32, 32, 32, 1, 4096, 128, 0}; /* MHA (1:1) */
    cases[nc++] = (bcase){KG_BF16, 64, 32, 8, 1, 4096, 128, 0};
    cases[nc++] = (bcase){KG_BF16, 8, 32, 1, 16, 8192, 128, 1}; /* MQA speculative rows */
    /* a seeded sweep of decode shapes (bf16/f16, Sq 1, D 64/128, any group,
       B 1..64, Sk 4k..32k, K+V 16 MB..1 GB) for the worst ratio to cuDNN */
    const int dseed0 = nc; /* rows dseed0.. dseed1 are the decode sweep's ("dseed" in their filter names) */
    {
        /* KG_BENCH_DEC_SEED / KG_BENCH_DEC_N (at most 24): another seed, more shapes */
        const char *se = getenv("KG_BENCH_DEC_SEED"), *sn = getenv("KG_BENCH_DEC_N");
        uint64_t sr = se ? strtoull(se, NULL, 10) : 777;
        const int count = sn && atoi(sn) > 0 && atoi(sn) <= 24 ? atoi(sn) : 12;
        /* KG_BENCH_DEC_DIM: one head dim for every row instead;
           KG_BENCH_DEC_MINBH: only rows of at least that many B x Hkv, and K+V
           up to 2.2 GB (not 1.1) */
        const char *sd = getenv("KG_BENCH_DEC_DIM"), *sb = getenv("KG_BENCH_DEC_MINBH");
        const int dfix = sd ? atoi(sd) : 0, minbh = sb ? atoi(sb) : 0;
        /* KG_BENCH_DEC_SMALL=<MB>: the small grids instead (B x Hkv at most
           16, any group 1-32, Sk 1000-65536, K+V 1 MB up to that many MB) */
        const char *ss = getenv("KG_BENCH_DEC_SMALL");
        const int small = ss ? atoi(ss) : 0;
        const int hkvs[] = {1, 2, 4, 8, 16, 32}, groups[] = {1, 4, 8, 16, 32}, bs[] = {1, 2, 4, 8, 16, 32, 64};
        for (int n = 0; n < count;) {
            int hkv = hkvs[kt_next(&sr) % 6], g = groups[kt_next(&sr) % 5], B = bs[kt_next(&sr) % 7];
            int Sk = 4096 + (int)(kt_next(&sr) % 28673);
            const int Dr = kt_next(&sr) % 3 ? 128 : 64;
            const int D = dfix ? dfix : Dr;
            if (small > 0) {
                hkv = hkvs[kt_next(&sr) % 4];
                g = 1 + (int)(kt_next(&sr) % 32);
                B = bs[kt_next(&sr) % 5];
                Sk = 1000 + (int)(kt_next(&sr) % 64537);
            }
            const double kv = 4.0 * B * hkv * (double)Sk * D;
            if (small > 0 ? B * hkv > 16 || kv < 1e6 || kv > small * 1e6
                          : hkv * g > 64 || kv < 16e6 || kv > (minbh > 0 ? 2.2e9 : 1.1e9) || B * hkv < minbh)
                continue;
            cases[nc++] = (bcase){kt_next(&sr) % 2 ? KG_BF16 : KG_F16, B, hkv * g, hkv, 1, Sk, D, 0};
            n++;
        }
    }
    /* KG_BENCH_DEC_ROWS=<','-separated dtype:B:Hq:Hkv:Sk:D, at most 24>:
       those decode rows (Sq 1) too, named "decode dseed list"; a row may
       add :Sq:causal (Sq 1-16) for a short-query row */
    const char *dl = getenv("KG_BENCH_DEC_ROWS");
    const int list0 = nc;
    for (int n = 0; dl && *dl && n < 24; n++) {
        char dn[8];
        int b, hq, hkv, sk, d, sq = 1, cz = 0, used = 0, u8 = 0;
        const int got =
            sscanf(dl, "%7[a-z0-9]:%d:%d:%d:%d:%d%n:%d:%d%n", dn, &b, &hq, &hkv, &sk, &d, &used, &sq, &cz, &u8);
        if ((got != 6 && got != 8) || b < 1 || hkv < 1 || hq < hkv || hq % hkv || sk < 1 || d < 1 || sq < 1 ||
            sq > 16 || cz < 0 || cz > 1) {
            fprintf(stderr, "KG_BENCH_DEC_ROWS: cannot read '%s'\n", dl);
            return 1;
        }
        if (u8 > 0)
            used = u8;
        else
            sq = 1, cz = 0;
        cases[nc++] = (bcase){!strcmp(dn, "f16") ? KG_F16 : KG_BF16, b, hq, hkv, sq, sk, d, cz};
        dl += used;
        dl += *dl == ',';
    }
    const int dseed1 = nc;
    cases[nc++] = (bcase){KG_BF16, 1, 32, 8, 512, 4096, 128, 1};
    cases[nc++] = (bcase){KG_BF16, 1, 32, 8, 512, 32768, 128, 1};
    cases[nc++] = (bcase){KG_BF16, 1, 64, 8, 512, 16384, 128, 1};
    /* a seeded sweep of prefill shapes (bf16/f16, every head dim, causal or
       not, MHA or GQA 4:1 / 8:1, S 1k..16k not a multiple of the tiles, about
       0.5 TFLOP each, more where one sequence of one batch is more) for the
       worst ratio to cuDNN */
    const int sweep0 = nc; /* rows sweep0.. are the sweep's ("sweep" in their filter names) */
    {
        /* KG_BENCH_SWEEP_SEED / KG_BENCH_SWEEP_N: another seed, more shapes */
        /* KG_BENCH_SWEEP_SMAX: sequence lengths 1000 .. this (at least 1024;
           default 16384), for the short sequences' fixed costs */
        const char *se = getenv("KG_BENCH_SWEEP_SEED"), *sn = getenv("KG_BENCH_SWEEP_N");
        const char *sm = getenv("KG_BENCH_SWEEP_SMAX");
        uint64_t sr = se ? strtoull(se, NULL, 10) : 2026;
        const int count = sn && atoi(sn) > 0 && atoi(sn) <= 40 ? atoi(sn) : 12;
        const int smax = sm && atoi(sm) >= 1024 && atoi(sm) <= 16384 ? atoi(sm) : 16384;
        const int dims[] = {32, 64, 96, 128, 256}, groups[] = {1, 4, 8};
        for (int n = 0; n < count; n++) {
            const int D = dims[kt_next(&sr) % 5], g = groups[kt_next(&sr) % 3], causal = (int)(kt_next(&sr) % 2);
            const int S = 1000 + (int)(kt_next(&sr) % (uint64_t)(smax - 999)), Hq = g == 1 ? 16 : 32;
            const double per = 4.0 * Hq * (double)S * S * D / (causal ? 2 : 1);
            int B = (int)(5e11 / per);
            B = B < 1 ? 1 : B > 64 ? 64 : B;
            cases[nc++] = (bcase){kt_next(&sr) % 2 ? KG_BF16 : KG_F16, B, Hq, Hq / g, S, S, D, causal};
        }
    }
    /* KG_BENCH_ROWS=<','-separated dtype:B:Hq:Hkv:S:D:causal, at most 24>:
       those prefill rows (Sq = Sk = S) too, named "sweep list" */
    const char *pl = getenv("KG_BENCH_ROWS");
    const int plist0 = nc;
    for (int n = 0; pl && *pl && n < 24; n++) {
        char dn[8];
        int b, hq, hkv, s, d, cz, used = 0;
        if (sscanf(pl, "%7[a-z0-9]:%d:%d:%d:%d:%d:%d%n", dn, &b, &hq, &hkv, &s, &d, &cz, &used) != 7 || b < 1 ||
            hkv < 1 || hq < hkv || hq % hkv || s < 1 || d < 1 || cz < 0 || cz > 1) {
            fprintf(stderr, "KG_BENCH_ROWS: cannot read '%s'\n", pl);
            return 1;
        }
        cases[nc++] = (bcase){!strcmp(dn, "f16") ? KG_F16 : KG_BF16, b, hq, hkv, s, s, d, cz};
        pl += used;
        pl += *pl == ',';
    }

    const double copy = bench_copy_gbps(ctx, (size_t)1 << 30);
    printf("same-run device copy: %.0f GB/s\n", copy);
    printf("%-5s %3s %3s %3s %5s %6s %4s %6s %10s %8s %8s %6s %7s %10s\n", "dtype", "B", "Hq", "Hkv", "Sq", "Sk", "D",
           "causal", "us", "TFLOP/s", "KV GB/s", "%copy", "variant", "other us");
    uint64_t rng = 12345;
    int ok = 1;
    for (int ci = 0; ci < nc; ci++) {
        const bcase bc = cases[ci];
        const kg_dtype dt = bc.dt;
        const int B = bc.B, Hq = bc.Hq, Hkv = bc.Hkv, Sq = bc.Sq, Sk = bc.Sk, D = bc.D;
        char name[96];
        snprintf(name, sizeof name, "%s D%d S%d causal%d Hq%d Hkv%d Sq%d Sk%d %s", kg_dtype_name(dt), D, Sq, bc.causal,
                 Hq, Hkv, Sq, Sk,
                 ci >= plist0 ? "sweep list "
                 : ci >= sweep0 ? "sweep "
                 : Sq > 16    ? "prefill "
                 : ci >= dseed0 && ci < dseed1 ? (ci >= list0 ? "decode dseed list " : "decode dseed ")
                                               : "decode ");
        if (filter && !matches(name, filter))
            continue;
        const size_t es = kg_dtype_size(dt);
        const int64_t nq = (int64_t)B * Hq * Sq * D, nk = (int64_t)B * Hkv * Sk * D;
        void *dq, *dk, *dv, *dout, *dl;
        void *hq = fill(ctx, dt, nq, &rng, &dq), *hk = fill(ctx, dt, nk, &rng, &dk), *hv = fill(ctx, dt, nk, &rng, &dv);
        BENCH_CHECK(ctx, kg_malloc(ctx, &dout, nq * es));
        BENCH_CHECK(ctx, kg_malloc(ctx, &dl, (size_t)B * Hq * Sq * 4));
        call_t c = {ctx,
                    kg_tensor_contiguous(dq, dt, 4, (const int64_t[]){B, Hq, Sq, D}),
                    kg_tensor_contiguous(dk, dt, 4, (const int64_t[]){B, Hkv, Sk, D}),
                    kg_tensor_contiguous(dv, dt, 4, (const int64_t[]){B, Hkv, Sk, D}),
                    kg_tensor_contiguous(dout, dt, 4, (const int64_t[]){B, Hq, Sq, D}),
                    kg_tensor_contiguous(dl, KG_F32, 3, (const int64_t[]){B, Hq, Sq}),
                    {0.f, bc.causal}};
        run(&c);
        const int variant = kg_test_last_attn_variant(ctx);
        if (!check(&c, hq, hk, hv, B, Hq, Hkv, Sq, Sk, D))
            ok = 0;
        /* visible (query, key) pairs: causal bottom-right */
        double pairs = (double)Sq * Sk;
        if (bc.causal)
            pairs = Sq <= Sk ? (double)Sq * Sk - (double)Sq * (Sq - 1) / 2 : (double)Sk * (Sk + 1) / 2;
        const double flop = 4.0 * B * Hq * pairs * D;
        const double kvbytes = 2.0 * (double)nk * es;
        const int inner = flop > 1e11 ? 5 : flop > 1e9 ? 20 : 200;
        const double us = bench_time_us(ctx, run, &c, inner, 7);
        const double tf = flop / (us * 1e6), gbps = kvbytes / (us * 1e3);
        /* short queries: the prefill path's time too (forced), for the crossover */
        double other = 0;
        if (is_decode_variant(variant) && Sq < 4) {
            /* Sq 1: the prefill path is many times slower; not timed */
        } else if (is_decode_variant(variant)) {
            kg_test_force_attn_variant(ctx, KG_ATTN_V_HOPPER);
            run(&c);
            if (kg_test_last_attn_variant(ctx) == variant) {
                kg_test_force_attn_variant(ctx, KG_ATTN_V_PORTABLE);
                run(&c);
            }
            if (kg_test_last_attn_variant(ctx) != variant)
                other = bench_time_us(ctx, run, &c, inner, 7);
            kg_test_force_attn_variant(ctx, -1);
        } else if (Sq <= 512 && Sq < Sk && dt != KG_F32) {
            kg_test_force_attn_variant(ctx, Hq / Hkv * Sq <= 16 ? KG_ATTN_V_DECODE : KG_ATTN_V_DECODE2);
            run(&c);
            if (kg_test_last_attn_variant(ctx) != variant)
                other = bench_time_us(ctx, run, &c, inner, 7);
            kg_test_force_attn_variant(ctx, -1);
        }
        printf("%-5s %3d %3d %3d %5d %6d %4d %6d %10.1f %8.1f %8.0f %5.0f%% %7s %10.1f\n", kg_dtype_name(dt), B, Hq,
               Hkv, Sq, Sk, D, bc.causal, us, tf, gbps, 100.0 * gbps / copy, kg_attn_variant_names[variant], other);
        fflush(stdout);
        /* $KG_BENCH_SPLITS (e.g. "4,8,16,32", or relative to the planner's
           count: "/2,x2" halves and doubles it): short-query rows again with
           each forced key split count */
        const char *sweep = getenv("KG_BENCH_SPLITS");
        if (sweep && is_decode_variant(variant)) {
            const int planned = kg_test_last_attn_splits(ctx);
            printf("      splits (planner %d):", planned);
            for (const char *x = sweep; *x;) {
                int f = atoi(x + (*x == 'x' || *x == '/'));
                if (*x == 'x')
                    f *= planned;
                else if (*x == '/')
                    f = f > 0 && planned / f > 0 ? planned / f : 1;
                kg_test_force_attn_splits(ctx, f);
                run(&c);
                const int got = kg_test_last_attn_splits(ctx);
                printf(" %d:%.1f", got, bench_time_us(ctx, run, &c, inner, 5));
                const char *e = strchr(x, ',');
                x = e ? e + 1 : x + strlen(x);
            }
            kg_test_force_attn_splits(ctx, 0);
            printf("\n");
        }
        /* $KG_BENCH_DEC_SPREAD=1: short-query rows again with the launch's
           one-block-per-multiprocessor padding forced off and on */
        const char *spr = getenv("KG_BENCH_DEC_SPREAD");
        if (spr && atoi(spr) == 1 && is_decode_variant(variant)) {
            printf("      spread (runtime's %s):", kg_test_last_attn_dec_spread() ? "on" : "off");
            for (int on = 0; on < 2; on++) {
                kg_test_attn_dec_spread(on ? 1 : -1);
                run(&c);
                printf(" %s%s %.1f", on ? "on" : "off", kg_test_last_attn_dec_spread() == on ? "" : "(not taken)",
                       bench_time_us(ctx, run, &c, inner, 5));
            }
            kg_test_attn_dec_spread(0);
            printf("\n");
        }
        /* $KG_BENCH_COMBINE: the other merge forced (fused in the last block /
           the combine kernel); "pdl": also without programmatic dependent launch */
        const char *cmb = getenv("KG_BENCH_COMBINE");
        if (cmb && is_decode_variant(variant) && kg_test_last_attn_splits(ctx) > 1) {
            const int mode = kg_test_last_attn_combine(ctx) == 2 ? 1 : 2;
            kg_test_force_attn_combine(ctx, mode);
            printf("      merge (runtime's %s): %s %.1f", mode == 1 ? "combine" : "fused",
                   mode == 1 ? "fused" : "combine", bench_time_us(ctx, run, &c, inner, 5));
            kg_test_force_attn_combine(ctx, 0);
            if (strstr(cmb, "pdl")) {
                kg_test_attn_pdl(ctx, 0);
                printf(" | no PDL %.1f", bench_time_us(ctx, run, &c, inner, 5));
                kg_test_attn_pdl(ctx, 1);
            }
            printf("\n");
        }
        /* $KG_BENCH_DEC_FILL=1: short-query rows again with the planner's
           fill of waves off, then the default again */
        const char *fl = getenv("KG_BENCH_DEC_FILL");
        if (fl && atoi(fl) == 1 && is_decode_variant(variant)) {
            run(&c);
            const int fs = kg_test_last_attn_splits(ctx), fp = kg_test_last_attn_dec_fill();
            kg_test_attn_dec_fill(-1);
            run(&c);
            const int os = kg_test_last_attn_splits(ctx);
            const double off = bench_time_us(ctx, run, &c, inner, 5);
            kg_test_attn_dec_fill(0);
            printf("      fill (runtime's %d%%): off %d splits %.1f, on %d splits %.1f\n", fp, os, off, fs,
                   bench_time_us(ctx, run, &c, inner, 5));
        }
        /* $KG_BENCH_LANES (e.g. "1,8"): split short-query rows again with the
           combine kernel's lanes forced to each count, then the default again */
        const char *lns = getenv("KG_BENCH_LANES");
        if (lns && is_decode_variant(variant))
            run(&c); /* the planner's split again (after the sweeps above) */
        if (lns && is_decode_variant(variant) && kg_test_last_attn_splits(ctx) > 1) {
            printf("      lanes (runtime's %d, %d splits): def %.1f", kg_test_last_attn_dec_lanes(),
                   kg_test_last_attn_splits(ctx), bench_time_us(ctx, run, &c, inner, 5));
            for (const char *x = lns; *x;) {
                kg_test_attn_dec_lanes(atoi(x));
                run(&c);
                printf(" %d:%.1f", kg_test_last_attn_dec_lanes(), bench_time_us(ctx, run, &c, inner, 5));
                const char *e = strchr(x, ',');
                x = e ? e + 1 : x + strlen(x);
            }
            kg_test_attn_dec_lanes(0);
            printf(" def %.1f\n", bench_time_us(ctx, run, &c, inner, 5));
        }
        if (getenv("KG_BENCH_TRACE") && is_decode_variant(variant))
            trace_call(&c, us);
        const char *dvs = getenv("KG_BENCH_DECVS");
        if (dvs && is_decode_variant(variant) && !dec_configs(&c, dvs, inner, hq, hk, hv, B, Hq, Hkv, Sq, Sk, D))
            ok = 0;
        /* $KG_BENCH_VS=<','-separated variant names>: the default and each
           named variant (forced, where it runs the row) timed in turn,
           three rounds, the fastest round of each (so that a GPU warming
           up over a row favours none of them) */
        const char *vsn = getenv("KG_BENCH_VS");
        if (vsn && !is_decode_variant(variant)) {
            int alt[KG_ATTN_V_COUNT], na = 0;
            for (int v = 0; v < KG_ATTN_V_COUNT; v++) {
                const char *nm = kg_attn_variant_names[v], *x = vsn;
                const size_t ln = strlen(nm);
                int named = 0;
                while (*x && !named) {
                    const char *e = strchr(x, ',');
                    const size_t lx = e ? (size_t)(e - x) : strlen(x);
                    named = lx == ln && !strncmp(x, nm, ln);
                    x += lx + (e ? 1 : 0);
                }
                if (!named || v == variant)
                    continue;
                kg_test_force_attn_variant(ctx, v);
                run(&c);
                if (kg_test_last_attn_variant(ctx) == v)
                    alt[na++] = v;
            }
            double best[KG_ATTN_V_COUNT + 1];
            for (int i = 0; i <= na; i++)
                best[i] = 1e30;
            for (int round = 0; round < 3; round++)
                for (int i = 0; i <= na; i++) {
                    kg_test_force_attn_variant(ctx, i == 0 ? -1 : alt[i - 1]);
                    const double t = bench_time_us(ctx, run, &c, inner, 5);
                    best[i] = t < best[i] ? t : best[i];
                }
            kg_test_force_attn_variant(ctx, -1);
            printf("      in turn, best of 3: default (%s) %.1f us", kg_attn_variant_names[variant], best[0]);
            for (int i = 0; i < na; i++)
                printf(" | %s %.1f us", kg_attn_variant_names[alt[i]], best[i + 1]);
            printf("\n");
        }
        /* $KG_BENCH_XORDER=1 (session 30's schedule): a persistent Hopper
           default (the runtime's rule, kg_attn_persist_sched), the order
           and claim before session 30 ("old": both hooks -1), and forced:
           the tiles ordered across batches (causal only:
           kg_test_attn_xorder), the late claim (kg_test_attn_lclaim) and
           both, timed in turn, three rounds, the fastest round of each;
           printed as KG_BENCH_VS prints, the others named "old", "xorder",
           "late", "both" (bench/attn_ab_table.py) */
        const int persist = variant == KG_ATTN_V_HOPPER_PERSIST || variant == KG_ATTN_V_HOPPER_PERSIST_PP ||
                            variant == KG_ATTN_V_HOPPER_PERSIST_BASE || variant == KG_ATTN_V_HOPPER_PERSIST_F2 ||
                            variant == KG_ATTN_V_HOPPER_PERSIST_TS;
        const int xo = getenv("KG_BENCH_XORDER") && atoi(getenv("KG_BENCH_XORDER")) == 1 && persist;
        static const char *const xname[5] = {"old", "xorder", "late", "both", "default"};
        /* configurations: 4 the rule; else bit 0 xorder, bit 1 late claim
           (-1 where 0); xflag: the flags each launch must take */
        int32_t rsp = 0, rch = 0;
        kg_attn_persist_sched(variant, bc.causal, 1, 0, 0, &rsp, &rch);
        int xcfg[5] = {4, 0, 2, 0, 0}, nx = 1;
        if (xo)
            nx = bc.causal ? 5 : 3;
        if (xo && bc.causal)
            xcfg[2] = 1, xcfg[3] = 2, xcfg[4] = 3;
        int xflag[5];
        for (int i = 0; i < 5; i++)
            xflag[i] = xcfg[i] == 4 ? (rsp > 0) | rch << 1 : (bc.causal ? xcfg[i] & 1 : 0) | (xcfg[i] & 2);
        double xbest[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
        int xtook = 1;
        for (int round = 0; xo && round < 3; round++)
            for (int i = 0; i < nx; i++) {
                kg_test_attn_xorder(xcfg[i] == 4 ? 0 : xcfg[i] & 1 ? 1 : -1);
                kg_test_attn_lclaim(xcfg[i] == 4 ? 0 : xcfg[i] & 2 ? 1 : -1);
                run(&c);
                xtook = xtook && kg_test_last_attn_xorder() == (xflag[i] & 1) &&
                        kg_test_last_attn_lclaim() == (xflag[i] >> 1);
                const double t = bench_time_us(ctx, run, &c, inner, 5);
                xbest[i] = t < xbest[i] ? t : xbest[i];
            }
        /* $KG_BENCH_PTRACE: the Hopper prefill rows' trace (each
           configuration timed); persistent: a block per multiprocessor up
           to the tiles */
        if (getenv("KG_BENCH_PTRACE") && !is_decode_variant(variant) && kg_attn_variant_sm90a[variant] &&
            (int64_t)B * Hq * ((Sq + 63) / 64) <= 1 << 16) {
            int sms = 0, slot = 0;
            kg_device_info(ctx, NULL, 0, NULL, NULL, &sms);
            while (slot < KG_ATTN_DIM_COUNT - 1 && kg_attn_dims[slot] != D)
                slot++;
            const int bm = kg_attn_table[variant][dt][slot][bc.causal ? KG_ATTN_CAUSAL : KG_ATTN_NONE].bm;
            const int units = persist && bm > 0 ? (int)(((int64_t)Sq + bm - 1) / bm * Hq * B) : 0;
            const int grid = persist ? (units < sms ? units : sms) : 0;
            for (int i = 0; i < nx; i++) {
                kg_test_attn_xorder(xcfg[i] == 4 ? 0 : xcfg[i] & 1 ? 1 : -1);
                kg_test_attn_lclaim(xcfg[i] == 4 ? 0 : xcfg[i] & 2 ? 1 : -1);
                ptrace_call(&c, xname[xcfg[i]], xo ? xbest[i] : us, grid, units);
            }
        }
        kg_test_attn_xorder(0);
        kg_test_attn_lclaim(0);
        if (xo && xtook) {
            printf("      in turn, best of 3: default (%s) %.1f us", kg_attn_variant_names[variant], xbest[0]);
            for (int i = 1; i < nx; i++)
                printf(" | %s %.1f us", xname[xcfg[i]], xbest[i]);
            printf("\n");
        } else if (xo)
            printf("      old / xorder / late: a launch did not take its schedule\n");
        /* $KG_BENCH_QUEUE: a persistent default again with its work queue
           the other way (and each persistent variant below) */
        if (getenv("KG_BENCH_QUEUE") &&
            (variant == KG_ATTN_V_HOPPER_PERSIST || variant == KG_ATTN_V_HOPPER_PERSIST_PP ||
             variant == KG_ATTN_V_HOPPER_PERSIST_TS)) {
            const int on = kg_test_last_attn_queue();
            kg_test_attn_queue(on ? -1 : 1);
            run(&c);
            printf("      queue (runtime's %s): %s %.1f us\n", on ? "on" : "off", kg_test_last_attn_queue() ? "on" : "off",
                   bench_time_us(ctx, run, &c, inner, 5));
            kg_test_attn_queue(0);
        }
        /* $KG_BENCH_ORDER: causal prefill rows again with the other block
           order (heaviest blocks first or the plain grid; Hopper variants) */
        if (getenv("KG_BENCH_ORDER") && bc.causal && !is_decode_variant(variant)) {
            const int on = kg_test_last_attn_order(ctx);
            kg_test_attn_order(ctx, !on);
            printf("      order (runtime's %s): %s %.1f us\n", on ? "heaviest first" : "grid",
                   on ? "grid" : "heaviest first", bench_time_us(ctx, run, &c, inner, 5));
            kg_test_attn_order(ctx, -1);
        }
        if (getenv("KG_BENCH_TMA") && dt != KG_F32) {
            printf("     ");
            tma_pair(ctx, &c, inner, kg_attn_variant_names[variant]);
            printf("\n");
        }
        /* head dims the Hopper path gained: each variant that can run it */
        if (!is_decode_variant(variant) && dt != KG_F32 && (D == 32 || D == 96 || getenv("KG_BENCH_VARIANTS"))) {
            printf("      variants:");
            const int vs[6] = {KG_ATTN_V_PORTABLE,  KG_ATTN_V_HOPPER,         KG_ATTN_V_HOPPER_LONG,
                               KG_ATTN_V_HOPPER_PP, KG_ATTN_V_HOPPER_PERSIST, KG_ATTN_V_HOPPER_PERSIST_PP};
            const char *which = getenv("KG_BENCH_VARIANTS");
            for (int x = which && !strcmp(which, "hopper") ? 1 : 0; x < 6; x++) {
                kg_test_force_attn_variant(ctx, vs[x]);
                run(&c);
                if (kg_test_last_attn_variant(ctx) != vs[x])
                    continue;
                if (getenv("KG_BENCH_TMA") && kg_attn_variant_sm90a[vs[x]])
                    tma_pair(ctx, &c, inner, kg_attn_variant_names[vs[x]]);
                else
                    printf(" %s %.1f us", kg_attn_variant_names[vs[x]], bench_time_us(ctx, run, &c, inner, 5));
                /* $KG_BENCH_QUEUE: the persistent variants again with their
                   work queue forced the other way (on: q, off: turns) */
                if (getenv("KG_BENCH_QUEUE") && x >= 4) {
                    const int on = kg_test_last_attn_queue();
                    kg_test_attn_queue(on ? -1 : 1);
                    run(&c);
                    printf(" (%s %.1f us)", kg_test_last_attn_queue() ? "q" : "turns",
                           bench_time_us(ctx, run, &c, inner, 5));
                    kg_test_attn_queue(0);
                }
            }
            kg_test_force_attn_variant(ctx, -1);
            printf("\n");
        }
        /* f32: the FFMA kernels and the split-TF32 one, same process */
        if (dt == KG_F32) {
            printf("      variants:");
            const int vs[3] = {KG_ATTN_V_PORTABLE, KG_ATTN_V_NARROW, KG_ATTN_V_X3};
            for (int x = 0; x < 3; x++) {
                if (vs[x] == KG_ATTN_V_NARROW && variant != KG_ATTN_V_NARROW)
                    continue; /* (slow on the large rows) */
                kg_test_force_attn_variant(ctx, vs[x]);
                run(&c);
                if (kg_test_last_attn_variant(ctx) == vs[x])
                    printf(" %s %.1f us", kg_attn_variant_names[vs[x]], bench_time_us(ctx, run, &c, inner, 5));
            }
            kg_test_force_attn_variant(ctx, -1);
            printf("\n");
        }
        fflush(stdout);
        char rname[96], note[160];
        if (Hq == Hkv && Sq == Sk)
            snprintf(rname, sizeof rname, "attention%s", bc.causal ? " causal" : "");
        else
            snprintf(rname, sizeof rname, "attention Hkv %d Sk %d%s", Hkv, Sk, bc.causal ? " causal" : "");
        snprintf(note, sizeof note,
                 "shape is [B, Hq, Sq, D]; TFLOP/s = 4 B Hq D x visible pairs; GB/s = K+V bytes; variant %s",
                 kg_attn_variant_names[variant]);
        bench_record(ctx, &(bench_case){.family = "attention",
                                        .name = rname,
                                        .dtype = kg_dtype_name(dt),
                                        .ndim = 4,
                                        .shape = {B, Hq, Sq, D},
                                        .time_us = us,
                                        .gbps = gbps,
                                        .tflops = tf,
                                        .note = note});
        if (csv)
            fprintf(csv, "attention_gqa,%s,%d,%d,%d,%d,%d,%d,%d,%.3f,%.2f,%.1f,%.1f\n", kg_dtype_name(dt), B, Hq, Hkv,
                    Sq, Sk, D, bc.causal, us, tf, gbps, copy);
        if (csv)
            fflush(csv); /* rows survive a timeout */
        free(hq);
        free(hk);
        free(hv);
        kg_free(ctx, dq);
        kg_free(ctx, dk);
        kg_free(ctx, dv);
        kg_free(ctx, dout);
        kg_free(ctx, dl);
    }
    if (csv)
        fclose(csv);
    kg_close(ctx);
    return ok ? 0 : 1;
}
