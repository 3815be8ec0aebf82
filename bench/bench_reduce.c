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
 */
#include <math.h>
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
    int axes[2], n_axes, keepdim;
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
    const int samples = n_out < 64 ? (int)n_out : 64;
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
        for (int64_t e = 0; e < red; e++) {
            int64_t off = base, q = e;
            for (int d = in->ndim - 1; d >= 0; d--)
                if ((mask >> d) & 1u) {
                    off += (q % in->shape[d]) * in->strides[d];
                    q /= in->shape[d];
                }
            if (isf) {
                xf[e] = kt_get(c->host, in->dtype, off);
                xa[e] = fabs(xf[e]);
            } else {
                xi[e] = kt_get_i(c->host, in->dtype, off);
            }
        }
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

static const char *const class_names[] = {"rows", "cols", "strided32", "strided64", "packed"};

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

int main(void)
{
    kg_context *ctx = bench_open("bench_reduce");
    char dev_name[128];
    int sms;
    BENCH_CHECK(ctx, kg_device_info(ctx, dev_name, sizeof dev_name, NULL, NULL, &sms));
    FILE *csv = bench_csv_open();
    const double copy = bench_copy_gbps(ctx, (size_t)1 << 30);
    printf("# bench_reduce on %s (%d SMs); device-to-device copy of 1 GiB: %.0f GB/s\n", dev_name, sms, copy);
    if (csv)
        fprintf(csv, "reduce-limit,copy,u8,%lld,0,%.1f\n", (long long)1 << 30, copy);
    BENCH_CHECK(ctx, kg_reserve_scratch(ctx, 0));

    /* inputs: 2^28 f32 in [-1,1), the same bits as i32, a bf16 rounding of
       it, and values near 1 for the product */
    uint64_t rng = 12345;
    float *hf = malloc(sizeof(float) * (size_t)N28), *hp = malloc(sizeof(float) * (size_t)N28);
    uint16_t *hb = malloc(2 * (size_t)N28);
    for (int64_t i = 0; i < N28; i++) {
        hf[i] = (float)kt_uniform(&rng, -1, 1);
        hp[i] = 1.0f + hf[i] * 1e-3f;
        hb[i] = kt_to_bf16(hf[i]);
    }
    void *df, *dp, *db, *dout, *didx;
    BENCH_CHECK(ctx, kg_malloc(ctx, &df, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dp, 4 * (size_t)N28));
    BENCH_CHECK(ctx, kg_malloc(ctx, &db, 2 * (size_t)N28));
    BENCH_CHECK(ctx, kg_malloc(ctx, &dout, 8 * (size_t)4194304));
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
    if (getenv("KG_RED_SWEEP"))
        sweep(cases, ncases, copy);
    printf("%-34s %-5s %10s %10s %8s  %s\n", "case", "dtype", "us", "GB/s", "% copy", "class");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
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
