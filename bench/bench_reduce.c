/*
 * bench_reduce.c - reductions against the limit measured in the same run
 * (device-to-device copy bandwidth), and the small case's host time per call
 * against a bare cudaLaunchKernel of the same kernel.
 *
 * Cases (issue 4): sum f32 2^28 all; sum f32 [16384,16384] dim 1 and dim 0;
 * sum bf16 [16384,16384] dim 1; sum f32 [4194304,64] dim 1; sum f32
 * [64,4194304] dim 0; sum i32 2^28; max with indices f32 [16384,16384] dim 1;
 * argmax f32 [4194304,64] dim 1; mean keepdim f32 [32,64,128] dim 1
 * (latency); prod f32 2^28. Inputs are random (1 GiB, well above L2); every
 * case is checked against the CPU reference (on a sample of its outputs)
 * before it is timed. Bytes count the input read once and every result
 * written once. CSV rows go to $KG_BENCH_CSV for bench/torch_reduce.py.
 *
 * Issue 10: the named shapes below (f32 sum over axis sets that are neither
 * rows nor columns) and a seeded sweep of random cases (KG_RED_CASES, default
 * 240, cut after KG_RED_SWEEP_SECONDS, default 25): ranks 2 to 6, sizes
 * with odd factors, 2^24 to 2^27 elements, random axis sets, contiguous and
 * permuted inputs, f32 / bf16 / i32 sums, each checked on a sample of
 * outputs, then timed; bench/torch_reduce.py times
 * PyTorch on the same cases and prints the distribution and every case below
 * target (90% of copy, or slower than PyTorch).
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "bench_common.h"
#include "internal.h"
#include "kg_red_reference.h"
#include "kg_red_table.h"
#include "kg_test.h"
#include "reduce_plan.h"

#define N28 ((int64_t)1 << 28)

typedef struct rcall {
    kg_context *ctx;
    kg_reduce_op op;
    const char *name;
    kg_tensor in, out, idx;
    int axes[KG_MAX_DIMS], n_axes, keepdim;
    const void *host;            /* the input's host copy, for the check */
    const kg_red_tuning *tuning; /* NULL: kg_reduce; else planned with this tuning (sweeps) */
    int sms;
} rcall;

static void run_rcall(void *p)
{
    rcall *c = p;
    const kg_red_info *info = &kg_red_infos[c->op];
    const kg_tensor *out = c->out.data ? &c->out : NULL, *idx = info->indexed ? &c->idx : NULL;
    kg_status st;
    if (c->tuning) {
        kg_red_plan plan;
        st = kg_reduce_plan_tuned(c->ctx, c->op, out, idx, &c->in, c->axes, c->n_axes, c->keepdim, c->sms, c->tuning,
                                  &plan);
        if (st == KG_OK)
            st = kg_reduce_launch(c->ctx, c->op, &plan, out, idx, &c->in);
    } else {
        st = kg_reduce(c->ctx, c->op, out, idx, &c->in, c->axes, c->n_axes, c->keepdim);
    }
    if (st != KG_OK) {
        fprintf(stderr, "%s: %s: %s\n", c->name, kg_status_name(st), kg_errmsg(c->ctx));
        exit(1);
    }
}

/* The reduced elements of one output (input offset `base`) in the
   reference's order (row-major over the reduced dims), read from the host
   copy: lanes of elements [e0, e1), each from a start of divisions, then
   an odometer over the reduced dims (no division per element). */
typedef struct gather_job {
    const rcall *c;
    unsigned mask;
    int64_t base, e0, e1;
    double *xf, *xa;
    int64_t *xi;
} gather_job;

static void *gather_run(void *p)
{
    const gather_job *j = p;
    const kg_tensor *in = &j->c->in;
    int rd[KG_MAX_DIMS], n = 0;
    for (int d = in->ndim - 1; d >= 0; d--)
        if ((j->mask >> d) & 1u)
            rd[n++] = d;
    int64_t ctr[KG_MAX_DIMS], off = j->base, q = j->e0;
    for (int k = 0; k < n; k++) {
        ctr[k] = q % in->shape[rd[k]];
        q /= in->shape[rd[k]];
        off += ctr[k] * in->strides[rd[k]];
    }
    for (int64_t e = j->e0; e < j->e1; e++) {
        if (j->xf) {
            j->xf[e] = kt_get(j->c->host, in->dtype, off);
            j->xa[e] = fabs(j->xf[e]);
        } else {
            j->xi[e] = kt_get_i(j->c->host, in->dtype, off);
        }
        for (int k = 0; k < n; k++) {
            off += in->strides[rd[k]];
            if (++ctr[k] < in->shape[rd[k]])
                break;
            off -= in->shape[rd[k]] * in->strides[rd[k]];
            ctr[k] = 0;
        }
    }
    return NULL;
}

/* gather_run over all red elements, on up to 16 threads for long slices
   (a full reduction's check reads up to 2^27 elements). */
static void gather(const rcall *c, unsigned mask, int64_t base, int64_t red, double *xf, double *xa, int64_t *xi)
{
    enum { MAXT = 16 };
    const int nt = red >= ((int64_t)1 << 20) ? MAXT : 1;
    gather_job jobs[MAXT];
    pthread_t th[MAXT];
    int started[MAXT] = {0};
    for (int t = 0; t < nt; t++) {
        jobs[t] = (gather_job){c, mask, base, red * t / nt, red * (t + 1) / nt, xf, xa, xi};
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, gather_run, &jobs[t]) == 0;
        if (t > 0 && !started[t])
            gather_run(&jobs[t]);
    }
    gather_run(&jobs[0]);
    for (int t = 1; t < nt; t++)
        if (started[t])
            pthread_join(th[t], NULL);
}

/* Elements the CPU reference reads per check (verify). */
static double verify_budget = 1 << 21;

/* KG_RED_VERIFY_ONCE=1 (a run of several KG_RED_ROUNDS over large full
   reductions, whose check reads every element: about a second each): each
   case checked once per tuning (its first round), not every round. Returns 1
   where (name, dtype, t) was checked before, else records it and returns 0
   (the trans cases share labels over bf16 and f16). */
static int checked_before(const char *name, kg_dtype dt, const kg_red_tuning *t)
{
    enum { MAXC = 4096 };
    static struct {
        char name[128];
        const kg_red_tuning *t;
        kg_dtype dt;
    } seen[MAXC];
    static int n_seen;
    if (!getenv("KG_RED_VERIFY_ONCE"))
        return 0;
    for (int i = 0; i < n_seen; i++)
        if (seen[i].t == t && seen[i].dt == dt && !strcmp(seen[i].name, name))
            return 1;
    if (n_seen < MAXC) {
        snprintf(seen[n_seen].name, sizeof seen[n_seen].name, "%s", name);
        seen[n_seen].dt = dt;
        seen[n_seen++].t = t;
    }
    return 0;
}

/* Checks up to 64 outputs spread over the result against the reference;
   returns 0 when all match. */
static int verify(rcall *c)
{
    kg_context *ctx = c->ctx;
    const kg_red_info *info = &kg_red_infos[c->op];
    const kg_tensor *in = &c->in;
    const int64_t n_out = c->out.data ? kg_numel(&c->out) : kg_numel(&c->idx);
    const size_t oes = kg_dtype_size(c->out.dtype);
    if (c->out.data)
        BENCH_CHECK(ctx, kg_memset(ctx, c->out.data, 0xff, (size_t)n_out * oes));
    if (info->indexed)
        BENCH_CHECK(ctx, kg_memset(ctx, c->idx.data, 0xff, (size_t)n_out * 8));
    run_rcall(c);
    BENCH_CHECK(ctx, kg_sync(ctx));
    unsigned mask = 0;
    for (int i = 0; i < c->n_axes; i++)
        mask |= 1u << c->axes[i];
    if (c->n_axes == 0)
        mask = (1u << in->ndim) - 1;
    int64_t red = 1;
    for (int d = 0; d < in->ndim; d++)
        if ((mask >> d) & 1u)
            red *= in->shape[d];
    const int isf = kt_is_float(in->dtype);
    double *xf = isf ? malloc(sizeof(double) * (size_t)red) : NULL;
    double *xa = isf ? malloc(sizeof(double) * (size_t)red) : NULL;
    int64_t *xi = isf ? NULL : malloc(sizeof(int64_t) * (size_t)red);
    int samples = n_out < 64 ? (int)n_out : 64;
    while (samples > 1 && (double)samples * (double)red > verify_budget)
        samples /= 2; /* the CPU reference reads samples x red elements */
    double rtol, atol;
    kt_tolerance(c->out.data ? c->out.dtype : KG_F32, &rtol, &atol);
    int bad = 0;
    for (int s = 0; s < samples && !bad; s++) {
        const int64_t o = samples == 1 ? 0 : (int64_t)((double)s * (double)(n_out - 1) / (samples - 1));
        /* the input offset of output o (row-major over the kept dims) */
        int64_t base = 0, r = o;
        for (int d = in->ndim - 1; d >= 0; d--)
            if (!((mask >> d) & 1u)) {
                base += (r % in->shape[d]) * in->strides[d];
                r /= in->shape[d];
            }
        gather(c, mask, base, red, xf, xa, xi);
        int64_t want_i = -1, got_i = -1;
        int ok = 1;
        double g = 0, w = 0;
        if (kt_is_float(in->dtype)) {
            w = kg_red_refs[c->op].f(xf, red, &want_i);
            if (c->out.data) {
                unsigned char b[8];
                BENCH_CHECK(ctx, kg_copy_out(ctx, b, (char *)c->out.data + o * (int64_t)oes, oes));
                g = kt_get(b, c->out.dtype, 0);
                const double mag = info->nonempty ? 0 : fabs(kg_red_refs[c->op].f(xa, red, NULL));
                const double k = strchr(info->combine, '*') ? 4.0 * sqrt((double)red) + 16.0 : 16.0;
                ok = kt_close(g, kt_round(c->out.dtype, w), rtol, atol + k * 0x1p-24 * mag);
            }
        } else {
            const int64_t wi = kg_red_refs[c->op].i(xi, red, &want_i);
            w = (double)wi;
            if (c->out.data) {
                unsigned char b[8];
                BENCH_CHECK(ctx, kg_copy_out(ctx, b, (char *)c->out.data + o * (int64_t)oes, oes));
                g = (double)kt_get_i(b, c->out.dtype, 0);
                ok = kt_get_i(b, c->out.dtype, 0) == wi;
            }
        }
        if (info->indexed) {
            BENCH_CHECK(ctx, kg_copy_out(ctx, &got_i, (char *)c->idx.data + o * 8, 8));
            ok = ok && got_i == want_i;
        }
        if (!ok) {
            fprintf(stderr, "%s: output %lld: got %.9g (index %lld), want %.9g (index %lld)\n", c->name, (long long)o,
                    g, (long long)got_i, w, (long long)want_i);
            bad = 1;
        }
    }
    free(xf);
    free(xa);
    free(xi);
    return bad;
}

static double bytes_of(const rcall *c)
{
    double b = (double)kg_numel(&c->in) * (double)kg_dtype_size(c->in.dtype);
    if (c->out.data)
        b += (double)kg_numel(&c->out) * (double)kg_dtype_size(c->out.dtype);
    if (kg_red_infos[c->op].indexed)
        b += (double)kg_numel(&c->idx) * 8.0;
    return b;
}

static rcall make(kg_context *ctx, kg_reduce_op op, const char *name, void *dev, const void *host, kg_dtype dt,
                  int ndim, const int64_t *shape, int axis, int keepdim, void *dout, void *didx, int values)
{
    rcall c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    c.op = op;
    c.name = name;
    c.host = host;
    c.in = kg_tensor_contiguous(dev, dt, ndim, shape);
    c.n_axes = axis < 0 ? 0 : 1;
    c.axes[0] = axis;
    c.keepdim = keepdim;
    int64_t os[KG_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < ndim; d++) {
        if (c.n_axes == 0 || d == axis) {
            if (keepdim)
                os[ond++] = 1;
        } else {
            os[ond++] = shape[d];
        }
    }
    const kg_red_info *info = &kg_red_infos[op];
    if (values)
        c.out = kg_tensor_contiguous(dout, info->out[dt], ond, os);
    else
        c.out = kg_tensor_contiguous(NULL, info->out[dt], ond, os);
    c.idx = kg_tensor_contiguous(didx, KG_I64, ond, os);
    return c;
}

static const char *const class_names[] = {"rows",   "cols",  "strided32", "strided64", "packed", "nest",  "colsn",
                                          "nestn",  "tile",  "flat",      "colso",     "colsp",  "nesto", "colsno",
                                          "nestno", "flatw", "slab",      "trans",     "flatwo", "colsq", "runt", "segw",
                                          "transv", "flatwr"};
/* " occN" where a plan takes the kernel at N blocks per multiprocessor */
static const char *occ_str(const kg_red_plan *p) { return p->occ == 4 ? " occ4" : p->occ == 3 ? " occ3" : ""; }
_Static_assert(sizeof class_names / sizeof class_names[0] == KG_RED_CLASS_COUNT, "a name per class");
/* A plan's kernel class for the printed lines (FLAT with a warp per unit: FLATW; its blocks off the vector grid,
   flatw_ragged: FLATWR) */
static int plan_class(const kg_red_plan *p)
{
    return p->cls == KG_RED_FLAT && p->args.group == 32 && (p->args.vec == 1 || p->args.vec == 2) ? KG_RED_FLATWR
           : p->cls == KG_RED_FLAT && p->args.group == 32                    ? KG_RED_FLATW
           : p->cls == KG_RED_COLS && p->args.group == 2 ? KG_RED_COLSQ
           : p->cls == KG_RED_TRANS && p->args.vec == 1  ? KG_RED_TRANSV
                                                         : (int)p->cls;
}

/* A call over in of `shape` laid out in memory in the order perm (outermost
   first; NULL: row-major), reducing the dims of mask, contiguous results. */
static rcall make_nd(kg_context *ctx, kg_reduce_op op, const char *name, void *dev, const void *host, kg_dtype dt,
                     int nd, const int64_t *shape, const int *perm, unsigned mask, void *dout, void *didx)
{
    rcall c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    c.op = op;
    c.name = name;
    c.host = host;
    c.in = kg_tensor_contiguous(dev, dt, nd, shape);
    if (perm) {
        int64_t st = 1;
        for (int i = nd - 1; i >= 0; i--) {
            c.in.strides[perm[i]] = st;
            st *= shape[perm[i]];
        }
    }
    int64_t os[KG_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < nd; d++) {
        if ((mask >> d) & 1u)
            c.axes[c.n_axes++] = d;
        else
            os[ond++] = shape[d];
    }
    const kg_red_info *info = &kg_red_infos[op];
    c.out = kg_tensor_contiguous(dout, info->out[dt], ond, os);
    c.idx = kg_tensor_contiguous(didx, KG_I64, ond, os);
    return c;
}

/* KG_RED_ALTS="label:name=value,...;label:...": other tunings of the
   planner (reduce_plan.h) timed on every any-axes case next to the default,
   each summarized like the default; cases where a tuning plans the same as
   the default reuse its time. */
#define MAX_ALTS 10
static struct alt {
    char label[32];
    kg_red_tuning t;
    double *pct; /* per sweep case */
    int changed; /* sweep cases planned differently */
} alts[MAX_ALTS];
static int n_alts;
/* the CSV's stream for the alternatives' rows ("reduce-alt", label, tuning
   label, dtype, us, GB/s), for torch_reduce.py's A/B table; NULL: none */
static FILE *alt_csv;

/* KG_RED_BASE="name=value,...": the any-axes cases' own line (and the CSV
   torch_reduce.py compares) planned with the default tuning changed so, a
   candidate default (the alternatives still start from the default). */
static kg_red_tuning base_tuning;
static const kg_red_tuning *base;

static void parse_base(void)
{
    const char *env = getenv("KG_RED_BASE");
    if (!env || !*env)
        return;
    base_tuning = kg_red_tuning_default;
    if (kg_red_tuning_parse(env, &base_tuning)) {
        fprintf(stderr, "KG_RED_BASE: bad tuning '%s'\n", env);
        exit(1);
    }
    base = &base_tuning;
    printf("# any-axes cases planned with KG_RED_BASE=%s (alternatives from the default)\n", env);
}

static void parse_alts(void)
{
    const char *env = getenv("KG_RED_ALTS");
    if (!env)
        return;
    char *s = strdup(env), *save = NULL;
    for (char *tok = strtok_r(s, ";", &save); tok && n_alts < MAX_ALTS; tok = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(tok, ':');
        struct alt *a = &alts[n_alts];
        a->t = kg_red_tuning_default;
        if (colon) {
            *colon = 0;
            if (kg_red_tuning_parse(colon + 1, &a->t)) {
                fprintf(stderr, "KG_RED_ALTS: bad tuning '%s'\n", colon + 1);
                exit(1);
            }
        }
        snprintf(a->label, sizeof a->label, "%s", tok);
        n_alts++;
    }
    free(s);
}

static int same_plan(const kg_red_plan *a, const kg_red_plan *b)
{
    return a->cls == b->cls && a->args.deep == b->args.deep && a->occ == b->occ && a->grid == b->grid &&
           a->args.group == b->args.group && a->args.cw == b->args.cw && a->args.vec == b->args.vec &&
           a->args.splits == b->args.splits && a->args.run == b->args.run && a->args.chunk == b->args.chunk &&
           a->args.units == b->args.units && a->args.vstore == b->args.vstore && a->args.inner == b->args.inner &&
           a->args.rdims.n == b->args.rdims.n && a->args.tile_rows == b->args.tile_rows;
}

/* The input's dims in memory order, innermost first, K (kept) or R
   (reduced) and size, for the printed lines. */
static void nest_str(const rcall *c, char *buf, size_t n)
{
    int ord[KG_MAX_DIMS], nd = c->in.ndim, at = 0;
    unsigned mask = 0;
    for (int i = 0; i < c->n_axes; i++)
        mask |= 1u << c->axes[i];
    for (int d = 0; d < nd; d++)
        ord[d] = d;
    for (int i = 1; i < nd; i++)
        for (int j = i; j > 0 && c->in.strides[ord[j]] < c->in.strides[ord[j - 1]]; j--) {
            const int t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    buf[0] = 0;
    for (int i = 0; i < nd && (size_t)at < n; i++)
        if (c->in.shape[ord[i]] > 1)
            at += snprintf(buf + at, n - (size_t)at, "%s%c%lld", at ? " " : "", (mask >> ord[i]) & 1u ? 'R' : 'K',
                           (long long)c->in.shape[ord[i]]);
}

/* Times each alternative tuning on c (default plan `def`, its GB/s `g0`);
   stores the percentages at pct_at (< 0: not a sweep case). */
static void run_alts(rcall *c, const kg_red_plan *def, double g0, double copy, int pct_at)
{
    const kg_red_info *info = &kg_red_infos[c->op];
    for (int a = 0; a < n_alts; a++) {
        kg_red_plan p;
        BENCH_CHECK(c->ctx,
                    kg_reduce_plan_tuned(c->ctx, c->op, c->out.data ? &c->out : NULL, info->indexed ? &c->idx : NULL,
                                         &c->in, c->axes, c->n_axes, c->keepdim, c->sms, &alts[a].t, &p));
        double g = g0, us = bytes_of(c) / (g0 * 1e3);
        if (!same_plan(&p, def)) {
            rcall v = *c;
            v.tuning = &alts[a].t;
            const double vb = verify_budget;
            verify_budget = vb < (1 << 18) ? vb : 1 << 18; /* fewer samples: the tests check the variants too */
            /* KG_RED_ALT_VERIFY_MAX=n: an alternative reducing more than n
               elements an output is not checked here (a full reduction's
               check reads every element, about a second at 2^28: the round's
               GPU tests check the same kernels against the reference) */
            const char *vmax = getenv("KG_RED_ALT_VERIFY_MAX");
            int64_t red = 1;
            for (int i = 0; i < c->n_axes; i++)
                red *= c->in.shape[c->axes[i]];
            if (c->n_axes == 0)
                red = kg_numel(&c->in);
            const int unchecked = vmax && (double)red > atof(vmax);
            const int bad = unchecked || checked_before(v.name, v.in.dtype, v.tuning) ? 0 : verify(&v);
            verify_budget = vb;
            if (bad) {
                printf("    alt %-12s WRONG RESULTS\n", alts[a].label);
                g = 0;
            } else {
                us = bench_time_us(v.ctx, run_rcall, &v, 3, 5);
                g = bytes_of(&v) / (us * 1e3);
                printf("    alt %-12s %9.1f %8.1f %6.1f%%  %s%s%s vec %d group %d cw %d run %lld splits %d grid %u%s\n",
                       alts[a].label, us, g, 100 * g / copy, class_names[plan_class(&p)], p.args.deep ? " deep" : "",
                       occ_str(&p), p.args.vec, p.args.group, p.args.cw, (long long)p.args.run, p.args.splits, p.grid,
                       unchecked ? " (not checked here)" : "");
            }
            if (pct_at >= 0)
                alts[a].changed++;
        }
        if (alt_csv && g > 0) /* (same plan: the default's time, marked "same") */
            fprintf(alt_csv, "reduce-alt,\"%s\",%s,%s,%.3f,%.1f,%s\n", c->name, alts[a].label,
                    kg_dtype_name(c->in.dtype), us, g, same_plan(&p, def) ? "same" : "changed");
        if (pct_at >= 0)
            alts[a].pct[pct_at] = 100 * g / copy;
    }
}

/* Checks, times and prints one case; returns GB/s (0: wrong results). */
static double run_case(rcall *c, double copy, const char *label, FILE *csv, const char *kind, const int *perm,
                       int sweep_at)
{
    if (!c->tuning)
        c->tuning = base;
    if (!checked_before(c->name, c->in.dtype, c->tuning) && verify(c)) {
        printf("%-44s %-5s WRONG RESULTS\n", label, kg_dtype_name(c->in.dtype));
        for (int a = 0; sweep_at >= 0 && a < n_alts; a++)
            alts[a].pct[sweep_at] = 0;
        return 0;
    }
    /* inputs of 2^24 elements and more, far above L2: a few calls suffice */
    const double us = bench_time_us(c->ctx, run_rcall, c, 3, 5);
    const double gbps = bytes_of(c) / (us * 1e3);
    kg_red_plan plan;
    const kg_red_info *info = &kg_red_infos[c->op];
    BENCH_CHECK(c->ctx,
                kg_reduce_plan_tuned(c->ctx, c->op, c->out.data ? &c->out : NULL, info->indexed ? &c->idx : NULL,
                                     &c->in, c->axes, c->n_axes, c->keepdim, c->sms, c->tuning, &plan));
    char nest[160];
    nest_str(c, nest, sizeof nest);
    printf("%-44s %-5s %9.1f %8.1f %6.1f%%  %s%s%s vec %d group %d cw %d run %lld splits %d grid %u | %s\n", label,
           kg_dtype_name(c->in.dtype), us, gbps, 100 * gbps / copy, class_names[plan_class(&plan)],
           plan.args.deep ? " deep" : "", occ_str(&plan), plan.args.vec, plan.args.group, plan.args.cw,
           (long long)plan.args.run, plan.args.splits, plan.grid, nest);
    run_alts(c, &plan, gbps, copy, sweep_at);
    if (csv) {
        const int nd = c->in.ndim;
        fprintf(csv, "%s,\"%s\",%s,%lld,%.3f,%.1f,", kind, label, kg_dtype_name(c->in.dtype),
                (long long)kg_numel(&c->in), us, gbps);
        for (int d = 0; d < nd; d++)
            fprintf(csv, d ? "x%lld" : "%lld", (long long)c->in.shape[d]);
        fprintf(csv, ",");
        for (int d = 0; d < nd; d++)
            fprintf(csv, d ? ".%d" : "%d", perm ? perm[d] : d);
        fprintf(csv, ",");
        for (int i = 0; i < c->n_axes; i++)
            fprintf(csv, i ? ".%d" : "%d", c->axes[i]);
        fprintf(csv, ",%s\n", class_names[plan_class(&plan)]);
    }
    return gbps;
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A case of the seeded sweep: memory order perm (outermost first) where
   permuted. */
typedef struct scase {
    int nd, permuted, perm[KG_MAX_DIMS];
    kg_dtype dt;
    int64_t shape[KG_MAX_DIMS];
    unsigned mask;
} scase;

/* The sweep's n cases, drawn in order (the seed fixes them; calloc'd). */
static scase *draw_sweep(int n)
{
    static const int64_t factors[] = {3,  5,   7,   9,   11,  13,  15,  17,  24,  31,   33,   63,   64,
                                      96, 100, 127, 128, 255, 256, 384, 500, 511, 1000, 1023, 2048, 4095};
    const int nf = (int)(sizeof factors / sizeof factors[0]);
    uint64_t rng = 20261201;
    scase *all = calloc((size_t)(n > 0 ? n : 1), sizeof *all);
    for (int k = 0; k < n; k++) {
        scase *q = &all[k];
        const int nd = 2 + (int)(kt_next(&rng) % 5);
        const kg_dtype dt = (kg_dtype[]){KG_F32, KG_BF16, KG_I32}[kt_next(&rng) % 3];
        const int64_t want = (int64_t)1 << (24 + kt_next(&rng) % 4); /* 2^24 .. 2^27 elements */
        int64_t *shape = q->shape, prod = 1;
        const int last = (int)(kt_next(&rng) % (uint64_t)nd); /* the dim that fills up to `want` */
        for (int d = 0; d < nd; d++) {
            if (d == last)
                continue;
            int64_t f = factors[kt_next(&rng) % (uint64_t)nf];
            while (f > 2 && prod * f * 64 > want)
                f = (f + 1) / 2;
            shape[d] = f;
            prod *= f;
        }
        shape[last] = (want + prod - 1) / prod;
        if (shape[last] % 2 == 0 && kt_next(&rng) % 2)
            shape[last] += 1; /* an odd factor there too */
        int *perm = q->perm;
        for (int d = 0; d < nd; d++)
            perm[d] = d;
        const int permuted = (int)(kt_next(&rng) % 2);
        if (permuted)
            for (int d = nd - 1; d > 0; d--) {
                const int j = (int)(kt_next(&rng) % (uint64_t)(d + 1));
                const int x = perm[d];
                perm[d] = perm[j];
                perm[j] = x;
            }
        unsigned mask = 0;
        while (mask == 0)
            mask = (unsigned)(kt_next(&rng) % (1u << nd));
        int64_t numel = 1;
        for (int d = 0; d < nd; d++)
            numel *= shape[d];
        if (numel > N28) { /* the input buffers hold 2^28 elements */
            k--;
            continue;
        }
        q->nd = nd;
        q->dt = dt;
        q->permuted = permuted;
        q->mask = mask;
    }
    return all;
}

/* The sweep case's label "#k [shape]p axes (...)". */
static void sweep_label(const scase *q, int k, char *label, size_t size)
{
    int at = snprintf(label, size, "#%d [", k);
    for (int d = 0; d < q->nd; d++)
        at += snprintf(label + at, size - (size_t)at, d ? ",%lld" : "%lld", (long long)q->shape[d]);
    at += snprintf(label + at, size - (size_t)at, "]%s axes (", q->permuted ? "p" : "");
    for (int d = 0, j = 0; d < q->nd; d++)
        if ((q->mask >> d) & 1u)
            at += snprintf(label + at, size - (size_t)at, j++ ? ",%d" : "%d", d);
    snprintf(label + at, size - (size_t)at, ")");
}

/* The issue-10 shapes and the seeded random sweep. */
static void any_axes(kg_context *ctx, int sms, double copy, FILE *csv, void *df, const float *hf, void *db,
                     const uint16_t *hb, void *dout, void *didx)
{
    static const struct {
        int nd;
        int64_t shape[4];
        unsigned mask;
    } named[] = {
        {4, {64, 256, 32, 256}, 0x5},
        {4, {64, 256, 32, 256}, 0xa},
        {3, {8, 4096, 4096}, 0x5},
        {3, {4096, 64, 1024}, 0x5},
        {3, {2048, 3, 4096}, 0x2},
        {4, {96, 96, 96, 96}, 0x9},
        {2, {7, 1048576}, 0x1},
        /* the issue-4 column and short-row shapes, for plans that change them */
        {2, {16384, 16384}, 0x1},
        {2, {64, 4194304}, 0x1},
        {2, {4194304, 64}, 0x2},
        /* rows of interleaved outputs: a kept dim of 2 or 4 innermost under
           the reduced run (FLATW's packed rows, flatw_kept) */
        {3, {4194304, 16, 2}, 0x2},
        {3, {1048576, 64, 2}, 0x2},
        {3, {4194304, 8, 4}, 0x2},
    };
    printf("# any axes: named shapes (f32 sum); case, dtype, us, GB/s, %% of copy, plan\n");
    /* KG_RED_NO_NAMED: the sweep alone (e.g. a profiler's run of a few sweep cases) */
    for (size_t i = 0; i < (getenv("KG_RED_NO_NAMED") ? 0 : sizeof named / sizeof named[0]); i++) {
        char label[96];
        int at = snprintf(label, sizeof label, "sum [");
        for (int d = 0; d < named[i].nd; d++)
            at += snprintf(label + at, sizeof label - (size_t)at, d ? ",%lld" : "%lld", (long long)named[i].shape[d]);
        at += snprintf(label + at, sizeof label - (size_t)at, "] axes (");
        for (int d = 0, k = 0; d < named[i].nd; d++)
            if ((named[i].mask >> d) & 1u)
                at += snprintf(label + at, sizeof label - (size_t)at, k++ ? ",%d" : "%d", d);
        snprintf(label + at, sizeof label - (size_t)at, ")");
        rcall c = make_nd(ctx, KG_RED_SUM, label, df, hf, KG_F32, named[i].nd, named[i].shape, NULL, named[i].mask,
                          dout, didx);
        c.sms = sms;
        run_case(&c, copy, label, csv, "reduce-named", NULL, -1);
    }
    const char *env = getenv("KG_RED_CASES");
    const int n = env ? atoi(env) : 240;
    /* KG_RED_ROUNDS (1 to 9, default 1): the cases run that many times in
       turn (e.g. a few cases of KG_RED_SWEEP_FIRST / _ONLY and their
       KG_RED_ALTS, each round default then alternatives, for a best of
       several in one process; the summaries count every run) */
    const char *rounds_env = getenv("KG_RED_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) > 1 && atoi(rounds_env) <= 9 ? atoi(rounds_env) : 1;
    const size_t cap = (size_t)(n > 0 ? n : 1) * (size_t)rounds;
    double *pct = malloc(sizeof(double) * cap);
    int *case_cls = malloc(sizeof(int) * cap);
    for (int a = 0; a < n_alts; a++)
        alts[a].pct = calloc(cap, sizeof(double));
    int done = 0;
    /* KG_RED_SWEEP_SECONDS (default 25): stop the sweep after that long (a
       time-capped run still prints its summaries; the default bench run and
       torch_reduce.py fit about 70 s on the H200) */
    const char *lim = getenv("KG_RED_SWEEP_SECONDS");
    if (!lim)
        lim = "25";
    const double t_end = bench_now() + atof(lim);
    printf("# any axes: seeded sweep of %d random cases (sum; 90%% of copy is the target)\n", n);
    scase *all = draw_sweep(n);
    int *order = malloc(sizeof(int) * cap), no = 0;
    char *first = calloc((size_t)(n > 0 ? n : 1), 1);
    if (getenv("KG_RED_SWEEP_FIRST")) {
        char *list = strdup(getenv("KG_RED_SWEEP_FIRST")), *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const int k = atoi(tok);
            if (k >= 0 && k < n && !first[k]) {
                first[k] = 1;
                order[no++] = k;
            }
        }
        free(list);
    }
    /* KG_RED_SWEEP_ONLY: those first cases alone */
    for (int k = 0; k < (getenv("KG_RED_SWEEP_ONLY") ? 0 : n); k++)
        if (!first[k])
            order[no++] = k;
    for (int rr = 1, once = no; rr < rounds; rr++)
        for (int i = 0; i < once; i++)
            order[no++] = order[i];
    for (int oi = 0; oi < no; oi++) {
        if (bench_now() > t_end) {
            printf("# sweep stopped after %d cases (KG_RED_SWEEP_SECONDS=%s)\n", done, lim);
            break;
        }
        const int k = order[oi];
        const int nd = all[k].nd, permuted = all[k].permuted;
        const int *perm = all[k].perm;
        const kg_dtype dt = all[k].dt;
        const int64_t *shape = all[k].shape;
        const unsigned mask = all[k].mask;
        char label[128];
        sweep_label(&all[k], k, label, sizeof label);
        void *dev = dt == KG_BF16 ? db : df;
        const void *host = dt == KG_BF16 ? (const void *)hb : (const void *)hf;
        rcall c = make_nd(ctx, KG_RED_SUM, label, dev, host, dt, nd, shape, permuted ? perm : NULL, mask, dout, didx);
        c.sms = sms;
        const double g = run_case(&c, copy, label, csv, "reduce-sweep", permuted ? perm : NULL, done);
        kg_red_plan cp;
        case_cls[done] =
            kg_reduce_plan_tuned(ctx, c.op, &c.out, NULL, &c.in, c.axes, c.n_axes, c.keepdim, sms, base, &cp) == KG_OK
                ? plan_class(&cp)
                : -1;
        pct[done++] = 100 * g / copy;
    }
    for (int a = 0; a < n_alts && done; a++) {
        double *best = malloc(sizeof(double) * (size_t)done);
        for (int i = 0; i < done; i++)
            best[i] = pct[i] > alts[a].pct[i] ? pct[i] : alts[a].pct[i];
        qsort(alts[a].pct, (size_t)done, sizeof(double), cmp_dbl);
        qsort(best, (size_t)done, sizeof(double), cmp_dbl);
        int under = 0, bu = 0;
        for (int i = 0; i < done; i++) {
            under += alts[a].pct[i] < 90;
            bu += best[i] < 90;
        }
        printf("# alt %s (%d cases planned differently): %% of copy worst %.1f, 10th pct %.1f, median %.1f, %d under "
               "90%%; best of it and the default: worst %.1f, median %.1f, %d under 90%%\n",
               alts[a].label, alts[a].changed, alts[a].pct[0], alts[a].pct[done / 10], alts[a].pct[done / 2], under,
               best[0], best[done / 2], bu);
        free(best);
        free(alts[a].pct);
    }
    if (done) {
        /* per class (worst, median), before the sort below */
        for (int k = 0; k < KG_RED_CLASS_COUNT; k++) {
            double v[512];
            int nv = 0;
            for (int i = 0; i < done && nv < 512; i++)
                if (case_cls[i] == k)
                    v[nv++] = pct[i];
            if (!nv)
                continue;
            qsort(v, (size_t)nv, sizeof *v, cmp_dbl);
            int u = 0;
            for (int i = 0; i < nv; i++)
                u += v[i] < 90;
            printf("# sweep class %-9s %3d cases: %% of copy worst %5.1f, median %5.1f, %d under 90%%\n",
                   class_names[k], nv, v[0], v[nv / 2], u);
        }
        qsort(pct, (size_t)done, sizeof *pct, cmp_dbl);
        int under = 0, hist[7] = {0};
        static const double edges[] = {50, 70, 80, 90, 95, 100};
        for (int i = 0; i < done; i++) {
            under += pct[i] < 90;
            int b = 0;
            while (b < 6 && pct[i] >= edges[b])
                b++;
            hist[b]++;
        }
        printf("# sweep: %d cases (all of 2^24 elements or more); %% of copy: worst %.1f, 10th pct %.1f, median %.1f, "
               "90th pct %.1f, best %.1f; %d under 90%%\n",
               done, pct[0], pct[done / 10], pct[done / 2], pct[done * 9 / 10], pct[done - 1], under);
        printf("# sweep distribution of %% of copy: [0,50) %d, [50,70) %d, [70,80) %d, [80,90) %d, [90,95) %d, "
               "[95,100) %d, [100,) %d (every case under 90%% is listed by bench/torch_reduce.py, beside PyTorch)\n",
               hist[0], hist[1], hist[2], hist[3], hist[4], hist[5], hist[6]);
    }
    free(pct);
    free(case_cls);
    free(all);
    free(order);
    free(first);
}

/* KG_RED_CLASS_CASES (session 29): sweep #71's class beside it, sums of
   2-byte columns that move in no vector: [K, R] laid out [R][K] (rows K
   elements apart, K odd or off the 8-element vectors) over axis 1, bf16,
   f16 and f32 (every other shape; 4-byte columns of no vector too: sweep #179,
   #9), row counts from 10 to 4097, one case under outer positions and
   two well above L2 (134 MB); each checked, timed beside every KG_RED_ALTS
   tuning (KG_RED_ROUNDS rounds in turn), CSV rows "reduce-class" (and
   "reduce-alt"), which bench/torch_reduce.py times PyTorch on and tabulates
   as A/B. */
static void class_cases(kg_context *ctx, int sms, double copy, FILE *csv, void *df, const float *hf, void *db,
                        const uint16_t *hb, void *dh, const uint16_t *hh, void *dout, void *didx)
{
    static const struct {
        int nd;
        int64_t shape[3];
        int perm[3];
        unsigned mask;
    } cs[] = {
        {2, {167773, 100}, {1, 0}, 0x2}, /* sweep #71 */
        {2, {83885, 200}, {1, 0}, 0x2},  {2, {335545, 50}, {1, 0}, 0x2},  {2, {16777, 1000}, {1, 0}, 0x2},
        {2, {1677721, 10}, {1, 0}, 0x2}, {2, {65539, 256}, {1, 0}, 0x2},  {2, {131074, 128}, {1, 0}, 0x2},
        {2, {33556, 500}, {1, 0}, 0x2},  {2, {4097, 4097}, {1, 0}, 0x2},  {3, {7, 23967, 100}, {0, 2, 1}, 0x4},
        {2, {335543, 200}, {1, 0}, 0x2}, {2, {33554, 2000}, {1, 0}, 0x2},
    };
    const char *rounds_env = getenv("KG_RED_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) > 1 && atoi(rounds_env) <= 9 ? atoi(rounds_env) : 1;
    printf("# class cases (sweep #71's: 2-byte columns that move in no vector), %d round(s)\n", rounds);
    for (int rr = 0; rr < rounds; rr++)
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            for (int d = 0; d < (i % 2 ? 2 : 3); d++) { /* f32: every other shape */
                const kg_dtype dt = (kg_dtype[]){KG_BF16, KG_F16, KG_F32}[d];
                void *dev = d == 2 ? df : d ? dh : db;
                const void *host = d == 2 ? (const void *)hf : d ? (const void *)hh : (const void *)hb;
                scase q;
                memset(&q, 0, sizeof q);
                q.nd = cs[i].nd;
                q.permuted = 1;
                memcpy(q.perm, cs[i].perm, sizeof cs[i].perm);
                memcpy(q.shape, cs[i].shape, sizeof cs[i].shape);
                q.mask = cs[i].mask;
                char label[128];
                sweep_label(&q, (int)i, label, sizeof label);
                label[0] = 'c'; /* "c<k> [...]p axes (...)" */
                rcall c = make_nd(ctx, KG_RED_SUM, label, dev, host, dt, q.nd, q.shape, q.perm, q.mask, dout, didx);
                c.sms = sms;
                run_case(&c, copy, label, csv, "reduce-class", q.perm, -1);
            }
}

/* KG_RED_TRANS_CASES (session 35): sweep #77's class beside it, bf16 sums
   whose outputs lie scattered in the input's order (TRANS): column-major
   [a, b, ko, R] over the last axis (the input contiguous along a, b chained
   with it: #77's ki of two dims whose results do not chain; the results
   contiguous along ko), R 2 to 16, rows of a x b elements off the 16-byte
   grid, about 2^27 elements each (268 MB, above L2), and [ki, ko, R] of one
   short ki (131: over trans_vec 128; 100: under it); each checked, timed
   beside every KG_RED_ALTS tuning (KG_RED_ROUNDS rounds in turn), CSV rows
   "reduce-class" (and "reduce-alt") for bench/torch_reduce.py's A/B table;
   labels "t<k> [...]p axes (last)". KG_RED_LIST lists their plans too. (One
   contiguous ki of 256 or more goes to COLS, not TRANS.) t0-t6 plan TRANSV
   by default since round s35r2 (trans_vec 128); KG_RED_ALTS='tv0:trans_vec=0'
   times TRANS's own kernel beside it. KG_RED_TRANS_CASES=f16 (session 35's
   tv16): the same cases in f16 (their own buffer of the largest view
   extent); t0-t6 plan TRANSV by default since round s35r4 (trans_vec_f16
   128); KG_RED_ALTS='tvh0:trans_vec_f16=0' times TRANS's own kernel beside
   it; =both: bf16 then f16. */
static const struct {
    int nd;
    int64_t shape[4];
} trans_cs[] = {
    {4, {63, 1041, 512, 4}},  {4, {31, 2165, 1000, 2}}, {4, {17, 1973, 500, 8}}, {4, {9, 1821, 512, 16}},
    {4, {100, 2015, 333, 2}}, {4, {255, 500, 105, 10}}, {3, {131, 204918, 5}},   {3, {100, 268435, 5}},
};

/* the dtypes of KG_RED_TRANS_CASES: bit 0 bf16 (any value but "f16"), bit 1
   f16 ("f16" or "both") */
static int trans_dtypes(void)
{
    const char *e = getenv("KG_RED_TRANS_CASES");
    if (!e)
        return 0;
    return !strcmp(e, "f16") ? 2 : !strcmp(e, "both") ? 3 : 1;
}

static scase trans_case(size_t i, kg_dtype dt, char *label, size_t size)
{
    scase q;
    memset(&q, 0, sizeof q);
    q.nd = trans_cs[i].nd;
    q.dt = dt;
    q.permuted = 1;
    for (int d = 0; d < q.nd; d++) {
        q.perm[d] = q.nd - 1 - d; /* column-major */
        q.shape[d] = trans_cs[i].shape[d];
    }
    q.mask = 1u << (q.nd - 1);
    sweep_label(&q, (int)i, label, size);
    label[0] = 't'; /* "t<k> [...]p axes (last)" */
    return q;
}

/* The elements a view reaches: its highest element offset + 1 (0 where
   empty); a trans case's input buffer must hold that many of its dtype. */
static int64_t view_extent(const kg_tensor *t)
{
    int64_t hi = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0)
            return 0;
        hi += (t->shape[d] - 1) * (t->strides[d] < 0 ? -t->strides[d] : t->strides[d]);
    }
    return hi + 1;
}

/* The largest view extent over the trans cases (their views are dense
   permutations, so each is its numel: t0 134,313,984, over 2^27). */
static int64_t trans_max_extent(void)
{
    int64_t m = 0;
    for (size_t i = 0; i < sizeof trans_cs / sizeof trans_cs[0]; i++) {
        char label[128];
        scase q = trans_case(i, KG_F16, label, sizeof label);
        rcall c = make_nd(NULL, KG_RED_SUM, label, NULL, NULL, q.dt, q.nd, q.shape, q.perm, q.mask, NULL, NULL);
        const int64_t e = view_extent(&c.in);
        m = e > m ? e : m;
    }
    return m;
}

static void trans_cases(kg_context *ctx, int sms, double copy, FILE *csv, void *db, const uint16_t *hb, void *dh,
                        const uint16_t *hh, int64_t nh, void *dout, void *didx)
{
    const char *rounds_env = getenv("KG_RED_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) > 1 && atoi(rounds_env) <= 9 ? atoi(rounds_env) : 1;
    const int dts = trans_dtypes();
    printf("# trans cases (sweep #77's: %s%s%s outputs scattered in the input's order), %d round(s)\n",
           dts & 1 ? "bf16" : "", dts == 3 ? " and " : "", dts & 2 ? "f16" : "", rounds);
    for (int d = 0; d < 2; d++)
        for (int rr = 0; (dts >> d) & 1 && rr < rounds; rr++)
            for (size_t i = 0; i < sizeof trans_cs / sizeof trans_cs[0]; i++) {
                char label[128];
                const kg_dtype dt = d ? KG_F16 : KG_BF16;
                scase q = trans_case(i, dt, label, sizeof label);
                rcall c = make_nd(ctx, KG_RED_SUM, label, d ? dh : db, d ? (const void *)hh : (const void *)hb, dt,
                                  q.nd, q.shape, q.perm, q.mask, dout, didx);
                const int64_t cap = d ? nh : N28, ext = view_extent(&c.in);
                if (ext > cap) { /* the view must fit its buffer (elements of dt) */
                    fprintf(stderr, "bench_reduce: trans case %s %s reaches %lld elements, its buffer holds %lld\n",
                            label, kg_dtype_name(dt), (long long)ext, (long long)cap);
                    exit(1);
                }
                c.sms = sms;
                run_case(&c, copy, label, csv, "reduce-class", q.perm, -1);
            }
}

/* KG_RED_FULL_CASES=1 (or N: the first N): full reductions (and one of three long rows) of
   2^24 to 2^28 elements through the any-axes path, so that each is timed
   beside every KG_RED_ALTS tuning (KG_RED_ROUNDS rounds in turn): the named
   cases sum f32 / i32 and prod f32 of 2^28 (the same plans as "sum 2^28
   all"), bf16, argmax, smaller sizes, and the named PACKED rows
   [4194304,64] dim 1 (sum, argmax). CSV rows "reduce-class", labels
   "full <op> [shape] axes (...)" or "rows <op> ..." where some dims are kept
   (bench/torch_reduce.py times the same op). */
static void full_cases(kg_context *ctx, int sms, double copy, FILE *csv, void *df, const float *hf, void *dp,
                       const float *hp, void *db, const uint16_t *hb, void *dout, void *didx)
{
    static const struct {
        kg_reduce_op op;
        kg_dtype dt;
        int nd;
        int64_t shape[2];
        unsigned mask;
    } fc[] = {
        {KG_RED_SUM, KG_F32, 1, {N28}, 0x1},      {KG_RED_SUM, KG_I32, 1, {N28}, 0x1},
        {KG_RED_PROD, KG_F32, 1, {N28}, 0x1},     {KG_RED_SUM, KG_F32, 1, {N28 / 4}, 0x1},
        {KG_RED_SUM, KG_F32, 1, {N28 / 16}, 0x1}, {KG_RED_SUM, KG_F32, 2, {3, N28 / 3}, 0x2},
        {KG_RED_SUM, KG_BF16, 1, {N28}, 0x1},     {KG_RED_ARGMAX, KG_F32, 1, {N28}, 0x1},
        /* and the named PACKED rows, one persistent wave too (grid 528) */
        {KG_RED_SUM, KG_F32, 2, {4194304, 64}, 0x2}, {KG_RED_ARGMAX, KG_F32, 2, {4194304, 64}, 0x2},
    };
    /* KG_RED_FULL_CASES=N > 1: the first N of them (the three named ones first); 1: all */
    const int nall = (int)(sizeof fc / sizeof fc[0]), want = atoi(getenv("KG_RED_FULL_CASES"));
    const int nfc = want > 1 && want < nall ? want : nall;
    const char *rounds_env = getenv("KG_RED_ROUNDS");
    const int rounds = rounds_env && atoi(rounds_env) > 1 && atoi(rounds_env) <= 9 ? atoi(rounds_env) : 1;
    printf("# full reductions, %d round(s)\n", rounds);
    for (int rr = 0; rr < rounds; rr++)
        for (int i = 0; i < nfc; i++) {
            char label[128];
            const int full = fc[i].mask == (1u << fc[i].nd) - 1;
            int at = snprintf(label, sizeof label, "%s %s [", full ? "full" : "rows", kg_red_infos[fc[i].op].name);
            for (int d = 0; d < fc[i].nd; d++)
                at += snprintf(label + at, sizeof label - (size_t)at, d ? ",%lld" : "%lld",
                               (long long)fc[i].shape[d]);
            snprintf(label + at, sizeof label - (size_t)at, "] axes (%s)", fc[i].mask == 0x1 ? "0" : "1");
            const int prod = fc[i].op == KG_RED_PROD;
            void *dev = fc[i].dt == KG_BF16 ? db : prod ? dp : df;
            const void *host = fc[i].dt == KG_BF16 ? (const void *)hb : prod ? (const void *)hp : (const void *)hf;
            rcall c = make_nd(ctx, fc[i].op, label, dev, host, fc[i].dt, fc[i].nd, fc[i].shape, NULL, fc[i].mask,
                              dout, didx);
            c.sms = sms;
            run_case(&c, copy, label, csv, "reduce-class", NULL, -1);
        }
}

/* Times c as planned with tuning t and prints one line. */
static void time_tuned(rcall *c, const char *label, const kg_red_tuning *t, double copy)
{
    rcall v = *c;
    v.tuning = t;
    if (verify(&v)) {
        printf("%-34s %-5s %-22s WRONG RESULTS (not timed)\n", v.name, kg_dtype_name(v.in.dtype), label);
        return;
    }
    const double us = bench_time_us(v.ctx, run_rcall, &v, 20, 15);
    const double gbps = bytes_of(&v) / (us * 1e3);
    kg_red_plan plan;
    const kg_red_info *info = &kg_red_infos[v.op];
    BENCH_CHECK(v.ctx, kg_reduce_plan_tuned(v.ctx, v.op, v.out.data ? &v.out : NULL, info->indexed ? &v.idx : NULL,
                                            &v.in, v.axes, v.n_axes, v.keepdim, v.sms, t, &plan));
    printf("%-34s %-5s %-22s %8.1f %8.1f %6.1f%%  %s cw %d group %d splits %d units %lld grid %u\n", v.name,
           kg_dtype_name(v.in.dtype), label, us, gbps, 100 * gbps / copy, class_names[plan.cls], plan.args.cw,
           plan.args.group, plan.args.splits, (long long)plan.args.units, plan.grid);
}

/* KG_RED_SWEEP=1: the plans the planner chose before (`old`) for every
   case, then variants of its tuning for the cases under 90% of copy. */
static void sweep(rcall *cases, int n, double copy)
{
    /* the tuning that reproduces the planner's choices before the sweep */
    const kg_red_tuning old = {
        .cols_lanes = 32, .cols_split_lanes = 32, .cols_split_units_per_sm = 16, .blocks_per_sm = 16};
    printf("# sweep: case, dtype, tuning, us, GB/s, %% of copy, plan\n");
    for (int i = 0; i < n; i++)
        time_tuned(&cases[i], "old", &old, copy);
    const kg_red_tuning d = kg_red_tuning_default;
#define T_(...) ((kg_red_tuning){__VA_ARGS__})
    const struct {
        int c;
        const char *label;
        kg_red_tuning t;
    } V[] = {
        {2, "default", d},
        {2, "cw64 s8", T_(.cols_lanes = 64, .cols_split_lanes = 64, .splits = 8, .blocks_per_sm = 16)},
        {2, "cw64 s32", T_(.cols_lanes = 64, .cols_split_lanes = 64, .splits = 32, .blocks_per_sm = 16)},
        {2, "cw32 s8", T_(.cols_lanes = 32, .cols_split_lanes = 32, .splits = 8, .blocks_per_sm = 16)},
        {2, "cw32 s16", T_(.cols_lanes = 32, .cols_split_lanes = 32, .splits = 16, .blocks_per_sm = 16)},
        {2, "cw128 s16", T_(.cols_lanes = 128, .cols_split_lanes = 128, .splits = 16, .blocks_per_sm = 16)},
        {5, "default", d},
        {5, "cw128", T_(.cols_lanes = 128, .cols_split_lanes = 64, .blocks_per_sm = 16)},
        {5, "cw256 bps12", T_(.cols_lanes = 256, .cols_split_lanes = 64, .blocks_per_sm = 12)},
        {5, "cw256 bps32", T_(.cols_lanes = 256, .cols_split_lanes = 64, .blocks_per_sm = 32)},
        {4, "default", d},
        {4, "packed bps16", T_(.pack_rows = 1, .packed_blocks_per_sm = 16)},
        {8, "default", d},
        {8, "packed bps16", T_(.pack_rows = 1, .packed_blocks_per_sm = 16)},
        {2, "old again", old},
        {5, "old again", old},
        {4, "old again", old},
        {8, "old again", old},
    };
#undef T_
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++)
        if (V[i].c < n)
            time_tuned(&cases[V[i].c], V[i].label, &V[i].t, copy);
    printf("# end of sweep\n");
}

/* KG_RED_LIST (no GPU needed): the sweep's plans on the CPU for a GPU of
   132 multiprocessors (the H200), each case's default plan (or
   KG_RED_BASE's), then every KG_RED_ALTS tuning that plans it otherwise,
   and per tuning the cases it changes: which cases a candidate rule would
   take, before a GPU round measures them. */
static int list_sweep(void)
{
    kg_context *ctx = NULL;
    kg_open(&ctx, 0); /* fails without a GPU; the context still plans */
    if (!ctx)
        return 1;
    parse_alts();
    parse_base();
    const char *env = getenv("KG_RED_CASES");
    const int n = env ? atoi(env) : 240, sms = 132;
    scase *all = draw_sweep(n);
    int changed[MAX_ALTS] = {0};
    for (int k = 0; k < n; k++) {
        const scase *q = &all[k];
        char label[128], nest[160];
        sweep_label(q, k, label, sizeof label);
        /* the bench's buffers: device allocations, 256-byte aligned */
        rcall c = make_nd(ctx, KG_RED_SUM, label, (void *)((uintptr_t)1 << 40), NULL, q->dt, q->nd, q->shape,
                          q->permuted ? q->perm : NULL, q->mask, (void *)((uintptr_t)1 << 41),
                          (void *)((uintptr_t)1 << 42));
        nest_str(&c, nest, sizeof nest);
        kg_red_plan p0;
        if (kg_reduce_plan_tuned(ctx, c.op, &c.out, NULL, &c.in, c.axes, c.n_axes, 0, sms, base, &p0) != KG_OK) {
            printf("%-44s %-5s planning failed: %s\n", label, kg_dtype_name(q->dt), kg_errmsg(ctx));
            continue;
        }
        printf("%-44s %-5s %s%s%s vec %d group %d cw %d run %lld tc %lld splits %d grid %u | %s\n", label,
               kg_dtype_name(q->dt), class_names[plan_class(&p0)], p0.args.deep ? " deep" : "", occ_str(&p0),
               p0.args.vec, p0.args.group,
               p0.args.cw, (long long)p0.args.run, (long long)p0.args.tile_rows, p0.args.splits, p0.grid, nest);
        for (int a = 0; a < n_alts; a++) {
            kg_red_plan p;
            if (kg_reduce_plan_tuned(ctx, c.op, &c.out, NULL, &c.in, c.axes, c.n_axes, 0, sms, &alts[a].t, &p) !=
                    KG_OK ||
                same_plan(&p, &p0))
                continue;
            changed[a]++;
            printf("    alt %-12s %s%s%s vec %d group %d cw %d run %lld tc %lld tiles %lld inner %lld red %lld splits %d "
                   "grid %u\n",
                   alts[a].label, class_names[plan_class(&p)], p.args.deep ? " deep" : "", occ_str(&p), p.args.vec,
                   p.args.group, p.args.cw, (long long)p.args.run, (long long)p.args.tile_rows,
                   (long long)p.args.tiles, (long long)p.args.inner, (long long)p.args.red, p.args.splits, p.grid);
        }
    }
    for (int a = 0; a < n_alts; a++)
        printf("# alt %s plans %d of the %d cases otherwise\n", alts[a].label, changed[a], n);
    for (size_t j = 0; j < 2 * (sizeof trans_cs / sizeof trans_cs[0]); j++) {
        const size_t i = j % (sizeof trans_cs / sizeof trans_cs[0]);
        const int d = j >= sizeof trans_cs / sizeof trans_cs[0];
        if (!((trans_dtypes() >> d) & 1))
            continue;
        char label[128], nest[160];
        scase q = trans_case(i, d ? KG_F16 : KG_BF16, label, sizeof label);
        rcall c = make_nd(ctx, KG_RED_SUM, label, (void *)((uintptr_t)1 << 40), NULL, q.dt, q.nd, q.shape, q.perm,
                          q.mask, (void *)((uintptr_t)1 << 41), (void *)((uintptr_t)1 << 42));
        nest_str(&c, nest, sizeof nest);
        kg_red_plan p0;
        if (kg_reduce_plan_tuned(ctx, c.op, &c.out, NULL, &c.in, c.axes, c.n_axes, 0, sms, base, &p0) != KG_OK) {
            printf("%-44s %-5s planning failed: %s\n", label, kg_dtype_name(q.dt), kg_errmsg(ctx));
            continue;
        }
        printf("%-44s %-5s %s vec %d tc %lld tiles %lld grid %u | %s\n", label, kg_dtype_name(q.dt),
               class_names[plan_class(&p0)], p0.args.vec, (long long)p0.args.tile_rows, (long long)p0.args.tiles,
               p0.grid, nest);
        for (int a = 0; a < n_alts; a++) {
            kg_red_plan p;
            if (kg_reduce_plan_tuned(ctx, c.op, &c.out, NULL, &c.in, c.axes, c.n_axes, 0, sms, &alts[a].t, &p) ==
                    KG_OK &&
                !same_plan(&p, &p0))
                printf("    alt %-12s %s vec %d tc %lld tiles %lld grid %u\n", alts[a].label,
                       class_names[plan_class(&p)], p.args.vec, (long long)p.args.tile_rows, (long long)p.args.tiles,
                       p.grid);
        }
    }
    free(all);
    kg_close(ctx);
    return 0;
}

int main(void)
{
    if (getenv("KG_RED_LIST"))
        return list_sweep();
    kg_context *ctx = bench_open("bench_reduce");
    char dev_name[128];
    int sms;
    BENCH_CHECK(ctx, kg_device_info(ctx, dev_name, sizeof dev_name, NULL, NULL, &sms));
    FILE *csv = bench_csv_open();
    if (csv) /* whole rows even where a time limit kills the run */
        setvbuf(csv, NULL, _IOLBF, 0);
    alt_csv = csv;
    const double copy = bench_copy_gbps(ctx, (size_t)1 << 30);
    printf("# bench_reduce on %s (%d SMs); device-to-device copy of 1 GiB: %.0f GB/s\n", dev_name, sms, copy);
    if (csv)
        fprintf(csv, "reduce-limit,copy,u8,%lld,0,%.1f\n", (long long)1 << 30, copy);
    BENCH_CHECK(ctx, kg_reserve_scratch(ctx, 0));

    /* inputs: 2^28 f32 in [-1,1), the same bits as i32, a bf16 rounding of
       it, and values near 1 for the product */
    /* (2^22 values from an xorshift with a bit-level bf16 rounding, repeated
       64 times: the test helpers take seconds per 2^24 values, too slow for
       2^28 in a timed GPU window; every check uses these host copies) */
    uint64_t rng = 12345;
    float *hf = malloc(sizeof(float) * (size_t)N28), *hp = malloc(sizeof(float) * (size_t)N28);
    uint16_t *hb = malloc(2 * (size_t)N28);
    const int64_t NB = (int64_t)1 << 22;
    for (int64_t i = 0; i < NB; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        hf[i] = (float)((int64_t)(rng >> 40) - ((int64_t)1 << 23)) * 0x1p-23f; /* [-1, 1) */
        hp[i] = 1.0f + hf[i] * 1e-3f;
        uint32_t u;
        memcpy(&u, &hf[i], 4);
        hb[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* to nearest even (finite values) */
    }
    for (int64_t at = NB; at < N28; at += NB) {
        memcpy(hf + at, hf, sizeof(float) * (size_t)NB);
        memcpy(hp + at, hp, sizeof(float) * (size_t)NB);
        memcpy(hb + at, hb, 2 * (size_t)NB);
    }
    void *df, *dp, *db, *dout, *didx;
    BENCH_CHECK(ctx, kg_malloc(ctx, &df, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dp, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_malloc(ctx, &db, 2 * (size_t)N28));
    /* results: up to 2^27 i64 values (the sweep reduces small dims too) */
    BENCH_CHECK(ctx, kg_malloc(ctx, &dout, 8 * (size_t)N28 / 2));
    BENCH_CHECK(ctx, kg_malloc(ctx, &didx, 8 * (size_t)4194304));
    BENCH_CHECK(ctx, kg_copy_in(ctx, df, hf, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_copy_in(ctx, dp, hp, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_copy_in(ctx, db, hb, 2 * (size_t)N28));

    const int64_t all[] = {N28}, sq[] = {16384, 16384}, shortr[] = {4194304, 64}, longc[] = {64, 4194304};
    rcall cases[] = {
        make(ctx, KG_RED_SUM, "sum 2^28 all", df, hf, KG_F32, 1, all, -1, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum [16384,16384] dim 1", df, hf, KG_F32, 2, sq, 1, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum [16384,16384] dim 0", df, hf, KG_F32, 2, sq, 0, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum [16384,16384] dim 1", db, hb, KG_BF16, 2, sq, 1, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum [4194304,64] dim 1", df, hf, KG_F32, 2, shortr, 1, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum [64,4194304] dim 0", df, hf, KG_F32, 2, longc, 0, 0, dout, didx, 1),
        make(ctx, KG_RED_SUM, "sum 2^28 all", df, hf, KG_I32, 1, all, -1, 0, dout, didx, 1),
        make(ctx, KG_RED_ARGMAX, "max+indices [16384,16384] dim 1", df, hf, KG_F32, 2, sq, 1, 0, dout, didx, 1),
        make(ctx, KG_RED_ARGMAX, "argmax [4194304,64] dim 1", df, hf, KG_F32, 2, shortr, 1, 0, dout, didx, 0),
        make(ctx, KG_RED_PROD, "prod 2^28 all", dp, hp, KG_F32, 1, all, -1, 0, dout, didx, 1),
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < ncases; i++)
        cases[i].sms = sms;
    parse_alts();
    parse_base();
    /* KG_RED_VERIFY: elements the CPU reference reads per check (default
       2^21; fewer make a time-capped sweep reach more cases) */
    if (getenv("KG_RED_VERIFY"))
        verify_budget = atof(getenv("KG_RED_VERIFY"));
    if (getenv("KG_RED_SWEEP"))
        sweep(cases, ncases, copy);
    printf("%-34s %-5s %10s %10s %8s  %s\n", "case", "dtype", "us", "GB/s", "% copy", "class");
    /* KG_RED_NO_BASE: only the any-axes cases and the latency */
    for (size_t i = 0; i < (getenv("KG_RED_NO_BASE") ? 0 : sizeof cases / sizeof cases[0]); i++) {
        rcall *c = &cases[i];
        if (verify(c))
            exit(1);
        const double us = bench_time_us(ctx, run_rcall, c, 20, 15);
        const double gbps = bytes_of(c) / (us * 1e3);
        kg_red_plan plan;
        const kg_red_info *info = &kg_red_infos[c->op];
        BENCH_CHECK(ctx, kg_reduce_plan(ctx, c->op, c->out.data ? &c->out : NULL, info->indexed ? &c->idx : NULL,
                                        &c->in, c->axes, c->n_axes, c->keepdim, sms, &plan));
        printf("%-34s %-5s %10.1f %10.1f %7.1f%%  %s, cw %d, group %d, splits %d, grid %u\n", c->name,
               kg_dtype_name(c->in.dtype), us, gbps, 100 * gbps / copy, class_names[plan.cls], plan.args.cw,
               plan.args.group, plan.args.splits, plan.grid);
        if (csv)
            fprintf(csv, "reduce,\"%s\",%s,%lld,%.3f,%.1f\n", c->name, kg_dtype_name(c->in.dtype),
                    (long long)kg_numel(&c->in), us, gbps);
        bench_case bc = {.family = "reduce",
                         .name = c->name,
                         .dtype = kg_dtype_name(c->in.dtype),
                         .ndim = c->in.ndim,
                         .time_us = us,
                         .gbps = gbps,
                         .note = class_names[plan.cls]};
        memcpy(bc.shape, c->in.shape, sizeof bc.shape);
        bench_record(ctx, &bc);
    }

    if (getenv("KG_RED_CLASS_CASES")) {
        /* f16 inputs for the class cases: 2^26 values, 2^22 of them rounded
           from hf by the test helper, repeated */
        const int64_t NH = (int64_t)1 << 26;
        uint16_t *hh = malloc(2 * (size_t)NH);
        for (int64_t i = 0; i < NB; i++)
            kt_set(hh, KG_F16, i, hf[i]);
        for (int64_t at = NB; at < NH; at += NB)
            memcpy(hh + at, hh, 2 * (size_t)NB);
        void *dh;
        BENCH_CHECK(ctx, kg_malloc(ctx, &dh, 2 * (size_t)NH));
        BENCH_CHECK(ctx, kg_copy_in(ctx, dh, hh, 2 * (size_t)NH));
        class_cases(ctx, sms, copy, csv, df, hf, db, hb, dh, hh, dout, didx);
        kg_free(ctx, dh);
        free(hh);
    }
    if (trans_dtypes()) {
        /* f16 inputs for the trans cases (the largest case's view extent,
           t0's 134,313,984 elements, rounded up to 2^22: 33 * 2^22; 2^27 was
           short of t0, t1, t3 and t6), 2^22 of them rounded from hf by the
           test helper, repeated; only where f16 cases run */
        const int64_t NT = (trans_dtypes() & 2) ? (trans_max_extent() + NB - 1) / NB * NB : 0;
        uint16_t *hh = NT ? malloc(2 * (size_t)NT) : NULL;
        void *dh = NULL;
        if (NT) {
            for (int64_t i = 0; i < NB; i++)
                kt_set(hh, KG_F16, i, hf[i]);
            for (int64_t at = NB; at < NT; at += NB)
                memcpy(hh + at, hh, 2 * (size_t)NB);
            BENCH_CHECK(ctx, kg_malloc(ctx, &dh, 2 * (size_t)NT));
            BENCH_CHECK(ctx, kg_copy_in(ctx, dh, hh, 2 * (size_t)NT));
        }
        trans_cases(ctx, sms, copy, csv, db, hb, dh, hh, NT, dout, didx);
        if (NT)
            kg_free(ctx, dh);
        free(hh);
    }
    if (getenv("KG_RED_FULL_CASES"))
        full_cases(ctx, sms, copy, csv, df, hf, dp, hp, db, hb, dout, didx);
    if (!getenv("KG_RED_NO_SWEEP"))
        any_axes(ctx, sms, copy, csv, df, hf, db, hb, dout, didx);

    /* latency: mean keepdim f32 [32,64,128] dim 1 */
    const int64_t small[] = {32, 64, 128};
    rcall m = make(ctx, KG_RED_MEAN, "mean keepdim [32,64,128] dim 1", df, hf, KG_F32, 3, small, 1, 1, dout, didx, 1);
    if (verify(&m))
        exit(1);
    const double dev_us = bench_time_us(ctx, run_rcall, &m, 200, 15);
    kg_red_plan plan;
    BENCH_CHECK(ctx, kg_reduce_plan(ctx, KG_RED_MEAN, &m.out, NULL, &m.in, m.axes, 1, 1, sms, &plan));
    plan.args.in = m.in.data;
    plan.args.out = m.out.data;
    cudaKernel_t kern;
    BENCH_CHECK(ctx, kg_kernel(ctx, kg_red_table[KG_RED_MEAN][KG_F32][plan.cls], &kern));
    void *args[] = {&plan.args};
    double host_kg[15], host_bare[15];
    for (int r = 0; r < 15; r++) {
        BENCH_CHECK(ctx, kg_sync(ctx));
        double t0 = bench_now();
        for (int i = 0; i < 1000; i++)
            run_rcall(&m);
        host_kg[r] = (bench_now() - t0) * 1e3;
        BENCH_CHECK(ctx, kg_sync(ctx));
        t0 = bench_now();
        for (int i = 0; i < 1000; i++)
            cudaLaunchKernel((const void *)kern, (dim3){plan.grid, 1, 1}, (dim3){KG_RED_THREADS, 1, 1}, args, 0,
                             (cudaStream_t)kg_get_stream(ctx));
        host_bare[r] = (bench_now() - t0) * 1e3;
    }
    BENCH_CHECK(ctx, kg_sync(ctx));
    for (int i = 1; i < 15; i++) /* sort both for their medians */
        for (int j = i; j > 0 && host_kg[j] < host_kg[j - 1]; j--) {
            double t = host_kg[j];
            host_kg[j] = host_kg[j - 1];
            host_kg[j - 1] = t;
        }
    for (int i = 1; i < 15; i++)
        for (int j = i; j > 0 && host_bare[j] < host_bare[j - 1]; j--) {
            double t = host_bare[j];
            host_bare[j] = host_bare[j - 1];
            host_bare[j - 1] = t;
        }
    printf("%-34s %-5s %10.2f us per call on the GPU (events); host per call: kgen %.2f us, bare "
           "cudaLaunchKernel %.2f us (+%.2f us)\n",
           m.name, "f32", dev_us, host_kg[7], host_bare[7], host_kg[7] - host_bare[7]);
    bench_record(ctx, &(bench_case){.family = "reduce",
                                    .name = m.name,
                                    .dtype = "f32",
                                    .ndim = 3,
                                    .shape = {32, 64, 128},
                                    .time_us = dev_us,
                                    .note = "latency"});
    bench_record(ctx, &(bench_case){.family = "host",
                                    .name = m.name,
                                    .dtype = "f32",
                                    .ndim = 3,
                                    .shape = {32, 64, 128},
                                    .time_us = host_kg[7],
                                    .note = "host time per call"});
    if (csv) {
        fprintf(csv, "reduce-latency,\"%s\",f32,%d,%.3f,0\n", m.name, 32 * 64 * 128, dev_us);
        fprintf(csv, "reduce-host,\"%s\",f32,%d,%.3f,0\n", m.name, 32 * 64 * 128, host_kg[7]);
        fprintf(csv, "reduce-host,bare launch,f32,%d,%.3f,0\n", 32 * 64 * 128, host_bare[7]);
        fclose(csv);
    }
    kg_free(ctx, df);
    kg_free(ctx, dp);
    kg_free(ctx, db);
    kg_free(ctx, dout);
    kg_free(ctx, didx);
    free(hf);
    free(hp);
    free(hb);
    kg_close(ctx);
    return 0;
}
