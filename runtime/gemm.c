/*
 * gemm.c - matmul: validation, batch broadcasting, and the mapping of any
 * expressible layout onto cuBLAS's column-major calls (see kg_gemm.h for
 * the contract).
 *
 * Order, as everywhere in kgen: arguments, dtypes and shapes are checked on
 * the host (kg_gemm_describe, tested without a GPU), then kg_ready, then the
 * device. The description is cuBLAS's own view: D = op(X) op(Y), column-
 * major. A row-major out is computed transposed (out^T = b^T a^T), so
 * row-major operands need no transpose flag and a bias runs along D's rows,
 * which is the only direction cuBLASLt's bias epilogue supports.
 *
 * Backend (KG_GEMM_AUTO), from bench_gemm on an H200 (2026-11-30): up to
 * 2^30 multiply-adds per call the time is mostly host time, and
 * cublasLtMatmul with the plan cached here was 3-10% faster than the
 * classic API (and than a direct cublasGemmEx); above that, the classic
 * cublasGemmEx / cublasGemmStridedBatchedEx matched or beat cuBLASLt's
 * first heuristic choice, so large calls go there. A bias or an epilogue
 * always needs cuBLASLt, as do sizes beyond the classic API's int.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "kg_ops_cast.h"  /* kg_cast */
#include "kg_ops_unary.h" /* kg_relu */
#include "trust.h"

/* A 2-d operand: element (i, j) at i * rs + j * cs. */
typedef struct view {
    int64_t rows, cols, rs, cs;
} view;

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/* How cuBLAS reads v as a column-major matrix: stored as is (trans 0, unit
   row stride) or transposed (trans 1, unit column stride). The stride of a
   size-1 dim does not matter. 0 when neither fits. */
static int map_operand(const view *v, int *trans, int64_t *ld)
{
    const int n_ok = (v->rows <= 1 || v->rs == 1) && (v->cols <= 1 ? 1 : v->cs >= max1(v->rows));
    const int t_ok = (v->cols <= 1 || v->cs == 1) && (v->rows <= 1 ? 1 : v->rs >= max1(v->cols));
    if (n_ok && (!t_ok || (v->rows > 1 && v->rs == 1))) {
        *trans = 0;
        *ld = v->cols <= 1 ? max1(v->rows) : v->cs;
        return 1;
    }
    if (t_ok) {
        *trans = 1;
        *ld = v->rows <= 1 ? max1(v->cols) : v->rs;
        return 1;
    }
    return 0;
}

/* The output has no transpose flag: it must be column-major. */
static int map_out(const view *v, int64_t *ld)
{
    if (v->rows > 1 && v->rs != 1)
        return 0;
    *ld = v->cols <= 1 ? max1(v->rows) : v->cs;
    return *ld >= max1(v->rows);
}

/* out may share no byte with an input (checked tensors): cuBLAS reads the
   inputs while it writes out. */
static kg_status check_no_overlap(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name)
{
    const kgi_range o = kgi_tensor_range(out), i = kgi_tensor_range(in);
    if (!kgi_ranges_overlap(o, i))
        return KG_OK;
    return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                    "invalid argument: matmul: out overlaps %s (bytes [%p, %p) and [%p, %p)); cuBLAS would read %s "
                    "while writing out",
                    name, (void *)o.lo, (void *)o.hi, (void *)i.lo, (void *)i.hi, name);
}

static kg_status check_dtypes(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b)
{
    if (a->dtype != b->dtype)
        return kgi_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: a is %s, b is %s (a, b and out share one dtype)",
                        kg_dtype_name(a->dtype), kg_dtype_name(b->dtype));
    if (out->dtype != a->dtype)
        return kgi_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: out is %s but a and b are %s",
                        kg_dtype_name(out->dtype), kg_dtype_name(a->dtype));
    const unsigned accepted = 1u << KG_F32 | 1u << KG_F64 | 1u << KG_F16 | 1u << KG_BF16;
    if (!(accepted & (1u << a->dtype)))
        return kgi_fail_dtype(ctx, "matmul", a->dtype, accepted);
    return KG_OK;
}

/* Batch broadcasting and the expected out shape. Fills the batch shape
   (nb dims) and each operand's batch strides (0 where broadcast). */
static kg_status check_shapes(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                              int *nb_out, int64_t *bs, int64_t *sa, int64_t *sb)
{
    char as[128], bsh[128], os[128], es[128];
    const int a1 = a->ndim == 1, b1 = b->ndim == 1;
    const int64_t K = a->shape[a->ndim - 1], K2 = b->shape[b1 ? 0 : b->ndim - 2];
    if (K != K2)
        return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: a is %s, b is %s: inner dims %lld and %lld differ",
                        kgi_shape_str(as, sizeof as, a->ndim, a->shape),
                        kgi_shape_str(bsh, sizeof bsh, b->ndim, b->shape), (long long)K, (long long)K2);
    const int na = a1 ? 0 : a->ndim - 2, nbb = b1 ? 0 : b->ndim - 2;
    const int nb = na > nbb ? na : nbb;
    for (int i = 0; i < nb; i++) {
        const int ia = i - (nb - na), ib = i - (nb - nbb);
        const int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char ab[128], bb[128];
            return kgi_fail(
                ctx, KG_ERR_SHAPE, "shape mismatch: matmul: a is %s, b is %s: batch dims %s and %s do not broadcast",
                kgi_shape_str(as, sizeof as, a->ndim, a->shape), kgi_shape_str(bsh, sizeof bsh, b->ndim, b->shape),
                kgi_shape_str(ab, sizeof ab, na, a->shape), kgi_shape_str(bb, sizeof bb, nbb, b->shape));
        }
        bs[i] = da == 1 ? db : da;
        sa[i] = ia >= 0 && da != 1 ? a->strides[ia] : 0;
        sb[i] = ib >= 0 && db != 1 ? b->strides[ib] : 0;
    }
    int64_t want[KG_MAX_DIMS + 2];
    int nw = 0;
    for (int i = 0; i < nb; i++)
        want[nw++] = bs[i];
    if (!a1)
        want[nw++] = a->shape[a->ndim - 2];
    if (!b1)
        want[nw++] = b->shape[b->ndim - 1];
    int same = out->ndim == nw;
    for (int d = 0; same && d < nw; d++)
        same = out->shape[d] == want[d];
    if (!same)
        return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: out is %s but a %s @ b %s is %s",
                        kgi_shape_str(os, sizeof os, out->ndim, out->shape),
                        kgi_shape_str(as, sizeof as, a->ndim, a->shape),
                        kgi_shape_str(bsh, sizeof bsh, b->ndim, b->shape), kgi_shape_str(es, sizeof es, nw, want));
    *nb_out = nb;
    return KG_OK;
}

static kg_status check_opts(kg_context *ctx, const kg_tensor *out, const kg_tensor *b, const kg_matmul_opts *o)
{
    if ((int)o->epilogue < 0 || o->epilogue >= KG_EPILOGUE_COUNT)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: matmul: epilogue %d is not a kg_epilogue",
                        (int)o->epilogue);
    if ((int)o->backend < 0 || o->backend >= KG_GEMM_BACKEND_COUNT)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: matmul: backend %d is not a kg_gemm_backend",
                        (int)o->backend);
    if (o->backend == KG_GEMM_CUBLAS && (o->bias || o->epilogue != KG_EPILOGUE_NONE))
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: a bias or epilogue needs cuBLASLt, not the KG_GEMM_CUBLAS backend");
    const kg_tensor *bias = o->bias;
    if (!bias)
        return KG_OK;
    kg_status st = kgi_check_tensor(ctx, bias, "bias");
    if (st != KG_OK)
        return st;
    const int64_t N = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    char s[128];
    if (bias->dtype != out->dtype)
        return kgi_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: bias is %s but out is %s",
                        kg_dtype_name(bias->dtype), kg_dtype_name(out->dtype));
    if (bias->ndim != 1 || bias->shape[0] != N)
        return kgi_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: bias is %s but must be [%lld] (out's last dim)",
                        kgi_shape_str(s, sizeof s, bias->ndim, bias->shape), (long long)N);
    if (N > 1 && bias->strides[0] != 1)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: bias [%lld] has stride %lld; it must be contiguous (stride 1)",
                        (long long)N, (long long)bias->strides[0]);
    return KG_OK;
}

/* Batch dim d of extent n folds into D's columns (X broadcast along it) when
   Y's and D's batch strides continue their column strides; into D's rows
   likewise with Y broadcast. Either way the result is one larger GEMM. */
static int try_fold(view *x, view *y, view *dv, int64_t n, int64_t sx, int64_t sy, int64_t sd, int into_rows,
                    int read_operands)
{
    view *grow = into_rows ? x : y; /* the operand whose dim grows */
    const int64_t s_grow = into_rows ? sx : sy, s_other = into_rows ? sy : sx;
    const int64_t ext = into_rows ? dv->rows : dv->cols;
    const int64_t g_st = into_rows ? grow->rs : grow->cs, d_st = into_rows ? dv->rs : dv->cs;
    if (s_other != 0)
        return 0;
    int64_t p1, p2;
    if (ext > 1 &&
        (__builtin_mul_overflow(ext, g_st, &p1) || __builtin_mul_overflow(ext, d_st, &p2) || s_grow != p1 || sd != p2))
        return 0;
    view g2 = *grow, d2 = *dv;
    if (into_rows) {
        if (__builtin_mul_overflow(g2.rows, n, &g2.rows) || __builtin_mul_overflow(d2.rows, n, &d2.rows))
            return 0;
        if (ext <= 1)
            g2.rs = s_grow, d2.rs = sd;
    } else {
        if (__builtin_mul_overflow(g2.cols, n, &g2.cols) || __builtin_mul_overflow(d2.cols, n, &d2.cols))
            return 0;
        if (ext <= 1)
            g2.cs = s_grow, d2.cs = sd;
    }
    int t;
    int64_t ld;
    if ((read_operands && !map_operand(&g2, &t, &ld)) || !map_out(&d2, &ld))
        return 0;
    *grow = g2;
    *dv = d2;
    return 1;
}

/* The direct mapping: every operand read where it is, batch dims folded into
   one GEMM where the strides allow (never into D's rows with a bias, which
   runs along them), merged where they chain, the largest run as the strided
   batch and the others looped. 0 when some operand has no layout cuBLAS can
   read or write as is. Fills g's geometry (not its limits: see the caller). */
static int direct_desc(kg_gemm_desc *g, int has_bias, const void *a_data, const void *b_data, int n0,
                       const int64_t *sz0, const int64_t *sa, const int64_t *sb, const int64_t *sc, const view *va,
                       const view *vb, const view *vc)
{
    const int64_t M = va->rows, N = vb->cols, K = va->cols;
    /* Orientation: out^T = b^T a^T when out is row-major (preferred), else
       out = a b when out is column-major (not with a bias). */
    const view dt = {N, M, vc->cs, vc->rs}, dn = *vc;
    int64_t ld;
    if (map_out(&dt, &ld))
        g->swapped = 1;
    else if (!has_bias && map_out(&dn, &ld))
        g->swapped = 0;
    else
        return 0;
    view x, y, dv;
    const int64_t *bx, *by;
    if (g->swapped) {
        x = (view){N, K, vb->cs, vb->rs}, y = (view){K, M, va->cs, va->rs}, dv = dt;
        bx = sb, by = sa, g->x = b_data, g->y = a_data;
    } else {
        x = *va, y = *vb, dv = dn;
        bx = sa, by = sb, g->x = a_data, g->y = b_data;
    }
    int t;
    if (!map_operand(&x, &t, &ld) || !map_operand(&y, &t, &ld))
        return 0;
    int n = n0;
    int64_t sz[KG_MAX_DIMS], s0[KG_MAX_DIMS], s1[KG_MAX_DIMS], s2[KG_MAX_DIMS];
    for (int i = 0; i < n; i++)
        sz[i] = sz0[i], s0[i] = bx[i], s1[i] = by[i], s2[i] = sc[i];
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = n - 1; i >= 0; i--) {
            if (try_fold(&x, &y, &dv, sz[i], s0[i], s1[i], s2[i], 0, 1) ||
                (!has_bias && try_fold(&x, &y, &dv, sz[i], s0[i], s1[i], s2[i], 1, 1))) {
                for (int j = i; j + 1 < n; j++)
                    sz[j] = sz[j + 1], s0[j] = s0[j + 1], s1[j] = s1[j + 1], s2[j] = s2[j + 1];
                n--;
                changed = 1;
                break;
            }
        }
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        int64_t p0, p1, p2;
        if (m > 0 && !__builtin_mul_overflow(s0[i], sz[i], &p0) && !__builtin_mul_overflow(s1[i], sz[i], &p1) &&
            !__builtin_mul_overflow(s2[i], sz[i], &p2) && s0[m - 1] == p0 && s1[m - 1] == p1 && s2[m - 1] == p2) {
            sz[m - 1] *= sz[i], s0[m - 1] = s0[i], s1[m - 1] = s1[i], s2[m - 1] = s2[i]; /* <= out's count */
            continue;
        }
        sz[m] = sz[i], s0[m] = s0[i], s1[m] = s1[i], s2[m] = s2[i], m++;
    }
    int big = -1;
    for (int i = 0; i < m; i++)
        if (big < 0 || sz[i] > sz[big])
            big = i;
    g->batch = 1;
    if (big >= 0)
        g->batch = sz[big], g->sx = s0[big], g->sy = s1[big], g->sd = s2[big];
    g->nloop = 0;
    for (int i = 0; i < m; i++)
        if (i != big) {
            g->loop_size[g->nloop] = sz[i];
            g->loop_sx[g->nloop] = s0[i], g->loop_sy[g->nloop] = s1[i], g->loop_sd[g->nloop] = s2[i];
            g->nloop++;
        }
    g->m = dv.rows, g->n = dv.cols, g->k = K;
    map_operand(&x, &g->trans_x, &g->ldx);
    map_operand(&y, &g->trans_y, &g->ldy);
    map_out(&dv, &g->ldd);
    return 1;
}

/* 1 when the batch strides s of n dims of sizes sz are one stride (each
   dim's stride is the next one's times that one's size; all 0 for an operand
   broadcast along every batch dim), stored in *stride. */
static int one_stride(int n, const int64_t *sz, const int64_t *s, int64_t *stride)
{
    for (int i = 1; i < n; i++) {
        int64_t p;
        if (__builtin_mul_overflow(s[i], sz[i], &p) || p != s[i - 1])
            return 0;
    }
    *stride = n ? s[n - 1] : 0;
    return 1;
}

/* Plans an operand's dense copy: `src` gets the view to copy (batch dims of
   extent > 1, then the matrix; only the matrix when the operand is
   broadcast along the whole batch), *packed the dense row-major matrix and
   *bstride its batch stride. Adds its bytes at *at. */
static int plan_pack(const kg_tensor *t, int vec_rows, int n, const int64_t *sz, const int64_t *s, int64_t rows,
                     int64_t cols, int64_t batch, kg_tensor *src, view *packed, int64_t *bstride, size_t *off,
                     size_t *at)
{
    int64_t st0;
    const int bcast = one_stride(n, sz, s, &st0) && st0 == 0;
    memset(src, 0, sizeof *src);
    src->data = t->data;
    src->dtype = t->dtype;
    int d = 0;
    if (!bcast)
        for (int i = 0; i < n; i++)
            src->shape[d] = sz[i], src->strides[d] = s[i], d++;
    if (t->ndim == 1) { /* a vector: a row of a (vec_rows 0) or a column of b */
        src->shape[d] = t->shape[0], src->strides[d] = t->strides[0], d++;
    } else {
        src->shape[d] = rows, src->strides[d] = t->strides[t->ndim - 2], d++;
        src->shape[d] = cols, src->strides[d] = t->strides[t->ndim - 1], d++;
    }
    src->ndim = d;
    (void)vec_rows;
    *packed = (view){rows, cols, cols, 1};
    int64_t mat = rows * cols; /* <= the operand's own element count */
    *bstride = bcast ? 0 : mat;
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)mat, (uint64_t)(bcast ? 1 : batch), &bytes) ||
        __builtin_mul_overflow(bytes, (uint64_t)kg_dtype_size(t->dtype), &bytes) || bytes > ((uint64_t)1 << 62))
        return 0;
    *off = *at;
    *at += kgi_pack_round((size_t)bytes);
    return *at <= ((size_t)1 << 62);
}

/* The packed mapping (any strides, one call): operands cuBLAS cannot read
   as they are, or whose batch no single stride describes, are copied
   densely into the pack area; an out it cannot write (or with such a batch)
   is computed densely there and copied back. The result is one strided-
   batched GEMM between at most three strided copies. */
static kg_status packed_desc(kg_context *ctx, kg_gemm_desc *g, const kg_tensor *out, const kg_tensor *a,
                             const kg_tensor *b, int n, const int64_t *sz, const int64_t *sa, const int64_t *sb,
                             const int64_t *sc, const view *va, const view *vb, const view *vc)
{
    const int64_t M = va->rows, N = vb->cols, K = va->cols;
    int64_t B = 1;
    for (int i = 0; i < n; i++)
        B *= sz[i]; /* <= out's element count */
    if (B > INT_MAX)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: a batch of %lld matrices exceeds cuBLAS's limit of %d", (long long)B,
                        INT_MAX);
    const int has_bias = g->bias != NULL;
    int64_t bsa, bsb, bsc, ld;
    const int ca = one_stride(n, sz, sa, &bsa), cb = one_stride(n, sz, sb, &bsb), cc = one_stride(n, sz, sc, &bsc);
    const view dt = {N, M, vc->cs, vc->rs}, dn = *vc;
    g->pack_x = g->pack_y = g->pack_d = 0;
    g->nloop = 0;
    view dv;
    if (cc && map_out(&dt, &ld))
        g->swapped = 1, dv = dt, g->sd = bsc;
    else if (cc && !has_bias && map_out(&dn, &ld))
        g->swapped = 0, dv = dn, g->sd = bsc;
    else
        g->swapped = 1, g->pack_d = 1, dv = (view){N, M, 1, N}, g->sd = M * N;
    /* a and b in cuBLAS's orientation */
    view A = *va, Bm = *vb;
    view ax = g->swapped ? (view){K, M, A.cs, A.rs} : A, bx = g->swapped ? (view){N, K, Bm.cs, Bm.rs} : Bm;
    int t;
    const int read_a = ca && map_operand(&ax, &t, &ld), read_b = cb && map_operand(&bx, &t, &ld);
    size_t at = 0, off_a = 0, off_b = 0;
    kg_tensor src_a, src_b;
    int ok = 1;
    if (!read_a) {
        view p;
        ok &= plan_pack(a, 0, n, sz, sa, M, K, B, &src_a, &p, &bsa, &off_a, &at);
        ax = g->swapped ? (view){K, M, p.cs, p.rs} : p;
    }
    if (!read_b) {
        view p;
        ok &= plan_pack(b, 1, n, sz, sb, K, N, B, &src_b, &p, &bsb, &off_b, &at);
        bx = g->swapped ? (view){N, K, p.cs, p.rs} : p;
    }
    if (g->pack_d) {
        uint64_t bytes;
        g->off_d = at;
        if (__builtin_mul_overflow((uint64_t)M * (uint64_t)N, (uint64_t)B, &bytes) ||
            __builtin_mul_overflow(bytes, (uint64_t)kg_dtype_size(out->dtype), &bytes) || bytes > ((uint64_t)1 << 62))
            ok = 0;
        else
            at += kgi_pack_round((size_t)bytes);
    }
    if (!ok) {
        char s1[128], s2[128], s3[128];
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: a %s @ b %s -> out %s needs dense copies of more than 2^62 bytes",
                        kgi_shape_str(s1, sizeof s1, a->ndim, a->shape),
                        kgi_shape_str(s2, sizeof s2, b->ndim, b->shape),
                        kgi_shape_str(s3, sizeof s3, out->ndim, out->shape));
    }
    g->pack_bytes = at;
    if (g->swapped) {
        g->x = b->data, g->y = a->data, g->sx = bsb, g->sy = bsa;
        g->pack_x = !read_b, g->pack_y = !read_a, g->off_x = off_b, g->off_y = off_a;
        if (!read_b)
            g->src_x = src_b;
        if (!read_a)
            g->src_y = src_a;
        map_operand(&bx, &g->trans_x, &g->ldx);
        map_operand(&ax, &g->trans_y, &g->ldy);
    } else {
        g->x = a->data, g->y = b->data, g->sx = bsa, g->sy = bsb;
        g->pack_x = !read_a, g->pack_y = !read_b, g->off_x = off_a, g->off_y = off_b;
        if (!read_a)
            g->src_x = src_a;
        if (!read_b)
            g->src_y = src_b;
        map_operand(&ax, &g->trans_x, &g->ldx);
        map_operand(&bx, &g->trans_y, &g->ldy);
    }
    g->d = out->data;
    g->batch = B;
    if (B == 1)
        g->sx = g->sy = g->sd = 0;
    g->m = dv.rows, g->n = dv.cols, g->k = K;
    map_out(&dv, &g->ldd);
    return KG_OK;
}

kg_status kg_gemm_describe(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                           const kg_matmul_opts *opts, kg_gemm_desc *g)
{
    static const kg_matmul_opts none = {NULL, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    const kg_matmul_opts *o = opts ? opts : &none;
    kg_status st = kgi_check_tensor(ctx, out, "out");
    if (st == KG_OK)
        st = kgi_check_tensor(ctx, a, "a");
    if (st == KG_OK)
        st = kgi_check_tensor(ctx, b, "b");
    if (st != KG_OK)
        return st;
    if (a->ndim == 0 || b->ndim == 0)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: %s is 0-d (a scalar); matmul needs at least 1 dim",
                        a->ndim == 0 ? "a" : "b");
    if ((st = check_dtypes(ctx, out, a, b)) != KG_OK)
        return st;
    int nb = 0;
    int64_t bs[KG_MAX_DIMS], sa[KG_MAX_DIMS], sb[KG_MAX_DIMS], sc[KG_MAX_DIMS];
    if ((st = check_shapes(ctx, out, a, b, &nb, bs, sa, sb)) != KG_OK)
        return st;
    if ((st = check_opts(ctx, out, b, o)) != KG_OK)
        return st;
    if ((st = kgi_check_no_self_overlap(ctx, out, "out")) != KG_OK)
        return st;
    if ((st = check_no_overlap(ctx, out, a, "a")) != KG_OK || (st = check_no_overlap(ctx, out, b, "b")) != KG_OK ||
        (o->bias && (st = check_no_overlap(ctx, out, o->bias, "bias")) != KG_OK))
        return st;

    const int a1 = a->ndim == 1, b1 = b->ndim == 1;
    const int64_t M = a1 ? 1 : a->shape[a->ndim - 2], K = a->shape[a->ndim - 1];
    const int64_t N = b1 ? 1 : b->shape[b->ndim - 1];
    const view va = {M, K, a1 ? 0 : a->strides[a->ndim - 2], a->strides[a->ndim - 1]};
    const view vb = {K, N, b->strides[b1 ? 0 : b->ndim - 2], b1 ? 0 : b->strides[b->ndim - 1]};
    const view vc = {M, N, a1 ? 0 : out->strides[nb], b1 ? 0 : out->strides[out->ndim - 1]};
    for (int i = 0; i < nb; i++)
        sc[i] = out->strides[i];

    memset(g, 0, sizeof *g);
    g->dtype = out->dtype;
    g->epilogue = o->epilogue;
    g->bias = o->bias ? o->bias->data : NULL;
    /* M * N * batch is out's element count, which kg_check_tensor bounded;
       checked anyway so this never depends on that. */
    int64_t total;
    int over = __builtin_mul_overflow(M, N, &total);
    for (int i = 0; i < nb; i++)
        over |= __builtin_mul_overflow(total, bs[i], &total);
    if (over)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: matmul: out has more than 2^63 elements");
    g->empty = total == 0;
    if (g->empty) /* nothing is read or written: any strides will do */
        return KG_OK;
    g->d = out->data;
    g->k = K;
    if (K == 0) { /* nothing is read: out = epilogue(bias or 0), whatever a's and b's strides */
        g->fill = 1;
        return KG_OK;
    }

    /* The batch dims of extent > 1, in a, b, out terms. */
    int n = 0;
    int64_t sz[KG_MAX_DIMS], ra[KG_MAX_DIMS], rb[KG_MAX_DIMS], rc[KG_MAX_DIMS];
    for (int i = 0; i < nb; i++)
        if (bs[i] != 1)
            sz[n] = bs[i], ra[n] = sa[i], rb[n] = sb[i], rc[n] = sc[i], n++;
    int direct = direct_desc(g, o->bias != NULL, a->data, b->data, n, sz, ra, rb, rc, &va, &vb, &vc);
    if (direct && g->nloop > 0) {
        int64_t calls = 1;
        for (int i = 0; i < g->nloop; i++)
            calls *= g->loop_size[i]; /* <= out's element count */
        direct = calls <= KG_GEMM_MAX_LOOP;
    }
    if (!direct)
        return packed_desc(ctx, g, out, a, b, n, sz, ra, rb, rc, &va, &vb, &vc);
    if (g->batch > INT_MAX)
        return kgi_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                        "invalid argument: matmul: a batch of %lld matrices exceeds cuBLAS's limit of %d",
                        (long long)g->batch, INT_MAX);
    return KG_OK;
}

/* ---- Running a description ------------------------------------------------ */

static uint32_t alignment(const void *p, const int64_t *strides, int n, size_t es)
{
    uint64_t bits = (uint64_t)(uintptr_t)p | 256;
    for (int i = 0; i < n; i++)
        bits |= (uint64_t)strides[i] * es;
    return (uint32_t)(bits & (~bits + 1));
}

static uint32_t align_of(const kg_gemm_desc *g, const void *p, int64_t bstride, const int64_t *loop)
{
    int64_t s[KG_MAX_DIMS + 1];
    int n = 0;
    if (g->batch > 1)
        s[n++] = bstride;
    for (int i = 0; i < g->nloop; i++)
        s[n++] = loop[i];
    return alignment(p, s, n, kg_dtype_size(g->dtype));
}

static int fits_int(const kg_gemm_desc *g)
{
    return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->ldx <= INT_MAX && g->ldy <= INT_MAX &&
           g->ldd <= INT_MAX;
}

static cudaDataType_t cuda_type(kg_dtype dt)
{
    return dt == KG_F64 ? CUDA_R_64F : dt == KG_F16 ? CUDA_R_16F : dt == KG_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static const double one_d = 1.0, zero_d = 0.0;
static const float one_f = 1.0f, zero_f = 0.0f;

static kg_status run_classic(kg_context *ctx, kg_blas *bl, const kg_gemm_desc *g, const char *x, const char *y, char *d)
{
    const cudaDataType_t t = cuda_type(g->dtype);
    const cublasComputeType_t ct = g->dtype == KG_F64                 ? CUBLAS_COMPUTE_64F
                                   : (g->dtype == KG_F32 && bl->tf32) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                      : CUBLAS_COMPUTE_32F;
    const void *alpha = g->dtype == KG_F64 ? (const void *)&one_d : (const void *)&one_f;
    const void *beta = g->dtype == KG_F64 ? (const void *)&zero_d : (const void *)&zero_f;
    const cublasOperation_t tx = g->trans_x ? CUBLAS_OP_T : CUBLAS_OP_N, ty = g->trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t s;
    if (g->batch == 1)
        s = cublasGemmEx(bl->handle, tx, ty, (int)g->m, (int)g->n, (int)g->k, alpha, x, t, (int)g->ldx, y, t,
                         (int)g->ldy, beta, d, t, (int)g->ldd, ct, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(bl->handle, tx, ty, (int)g->m, (int)g->n, (int)g->k, alpha, x, t, (int)g->ldx,
                                       g->sx, y, t, (int)g->ldy, g->sy, beta, d, t, (int)g->ldd, g->sd, (int)g->batch,
                                       ct, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS
               ? KG_OK
               : kg_cublas_fail(ctx, s, g->batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx");
}

static kg_status run_lt(kg_context *ctx, kg_blas *bl, const kg_plan *p, const kg_gemm_desc *g, const char *x,
                        const char *y, char *d, const char *bias)
{
    const void *alpha = g->dtype == KG_F64 ? (const void *)&one_d : (const void *)&one_f;
    const void *beta = g->dtype == KG_F64 ? (const void *)&zero_d : (const void *)&zero_f;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (bias)
        s = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmul(bl->lt, p->op, alpha, x, p->lx, y, p->ly, beta, d, p->ld, d, p->ld, &p->algo, bl->workspace,
                           bl->workspace_bytes, ctx->stream);
    return s == CUBLAS_STATUS_SUCCESS ? KG_OK : kg_cublas_fail(ctx, s, "cublasLtMatmul");
}

/* Runs g once per index of its looped dims, through cuBLASLt (use_lt) or
   the classic API. */
static kg_status run_all(kg_context *ctx, kg_blas *bl, const kg_gemm_desc *g, int use_lt)
{
    kg_plan *p = NULL;
    if (use_lt) {
        kg_plan_key key;
        memset(&key, 0, sizeof key);
        key.dtype = g->dtype, key.tf32 = g->dtype == KG_F32 && bl->tf32, key.epilogue = g->epilogue;
        key.has_bias = g->bias != NULL, key.trans_x = g->trans_x, key.trans_y = g->trans_y;
        key.m = g->m, key.n = g->n, key.k = g->k, key.ldx = g->ldx, key.ldy = g->ldy, key.ldd = g->ldd;
        key.batch = g->batch;
        if (g->batch > 1)
            key.sx = g->sx, key.sy = g->sy, key.sd = g->sd;
        key.align_x = align_of(g, g->x, g->sx, g->loop_sx);
        key.align_y = align_of(g, g->y, g->sy, g->loop_sy);
        key.align_d = align_of(g, g->d, g->sd, g->loop_sd);
        key.align_bias = g->bias ? alignment(g->bias, NULL, 0, 1) : 0;
        kg_status st = kg_blas_plan(ctx, bl, &key, &p);
        if (st != KG_OK)
            return st;
    }
    const size_t es = kg_dtype_size(g->dtype);
    int64_t idx[KG_MAX_DIMS] = {0};
    for (;;) {
        int64_t ox = 0, oy = 0, od = 0;
        for (int i = 0; i < g->nloop; i++)
            ox += idx[i] * g->loop_sx[i], oy += idx[i] * g->loop_sy[i], od += idx[i] * g->loop_sd[i];
        const char *x = (const char *)g->x + ox * (int64_t)es, *y = (const char *)g->y + oy * (int64_t)es;
        char *d = (char *)g->d + od * (int64_t)es;
        kg_status st = use_lt ? run_lt(ctx, bl, p, g, x, y, d, g->bias) : run_classic(ctx, bl, g, x, y, d);
        if (st != KG_OK)
            return st;
        int i = g->nloop - 1;
        while (i >= 0 && ++idx[i] == g->loop_size[i])
            idx[i--] = 0;
        if (i < 0)
            return KG_OK;
    }
}

/* K = 0: out = epilogue(bias) broadcast over out's rows and batch, or zeros
   without a bias (relu and gelu of 0 are 0): one strided copy from a
   stride-0 view, whatever out's strides, then relu in place. gelu (tanh) of
   the bias is computed first into the pack area, as one K = 1 product of
   zeros with the bias epilogue. */
static kg_status fill(kg_context *ctx, kg_blas *bl, const kg_gemm_desc *g, const kg_tensor *out, const kg_tensor *bias)
{
    const size_t es = kg_dtype_size(g->dtype);
    kg_tensor src;
    memset(&src, 0, sizeof src);
    src.dtype = out->dtype;
    src.ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++)
        src.shape[d] = out->shape[d];
    src.data = bl->zeros;
    kg_status st;
    if (bias) {
        const int64_t N = bias->shape[0];
        const int row = out->ndim > 0 && out->shape[out->ndim - 1] == N && N > 1;
        src.data = bias->data;
        if (row)
            src.strides[out->ndim - 1] = bias->strides[0];
        if (g->epilogue == KG_EPILOGUE_GELU_TANH) {
            /* pack area: N zeros (one memset), then gelu(bias), as one
               N x 1 x 1 cuBLASLt product with the bias epilogue */
            void *v;
            const size_t vec = kgi_pack_round((size_t)N * es);
            if ((st = kgi_pack_area(ctx, 2 * vec, &v)) != KG_OK)
                return st;
            cudaError_t err = cudaMemsetAsync(v, 0, vec, ctx->stream);
            if (err != cudaSuccess)
                return kgi_cuda_fail(ctx, err, "matmul with K = 0: clearing the zero operand");
            kg_gemm_desc t;
            memset(&t, 0, sizeof t);
            t.dtype = g->dtype, t.epilogue = g->epilogue;
            t.m = N, t.n = 1, t.k = 1;
            t.x = t.y = v;
            t.ldx = N, t.ldy = 1, t.ldd = N, t.batch = 1;
            t.d = (char *)v + vec;
            t.bias = bias->data;
            if ((st = run_all(ctx, bl, &t, 1)) != KG_OK)
                return st;
            v = (char *)v + vec;
            src.data = v;
            if (row)
                src.strides[out->ndim - 1] = 1;
        }
    }
    if ((st = kg_cast(ctx, out, &src)) != KG_OK)
        return st;
    if (bias && g->epilogue == KG_EPILOGUE_RELU)
        st = kg_relu(ctx, out, out);
    return st;
}

/* A packed description: the dense copies into the pack area, the GEMM, and
   the copy of a dense result into out. */
static kg_status run_packed(kg_context *ctx, kg_blas *bl, kg_gemm_desc *g, const kg_tensor *out, int use_lt)
{
    void *area;
    kg_status st = kgi_pack_area(ctx, g->pack_bytes, &area);
    if (st != KG_OK)
        return st;
    char *base = area;
    if (g->pack_x) {
        kg_tensor dst = kg_tensor_contiguous(base + g->off_x, g->dtype, g->src_x.ndim, g->src_x.shape);
        if ((st = kg_cast(ctx, &dst, &g->src_x)) != KG_OK)
            return st;
        g->x = dst.data;
    }
    if (g->pack_y) {
        kg_tensor dst = kg_tensor_contiguous(base + g->off_y, g->dtype, g->src_y.ndim, g->src_y.shape);
        if ((st = kg_cast(ctx, &dst, &g->src_y)) != KG_OK)
            return st;
        g->y = dst.data;
    }
    if (g->pack_d)
        g->d = base + g->off_d;
    if ((st = run_all(ctx, bl, g, use_lt)) != KG_OK)
        return st;
    if (g->pack_d) {
        kg_tensor dense = kg_tensor_contiguous(g->d, g->dtype, out->ndim, out->shape);
        st = kg_cast(ctx, out, &dense);
    }
    return st;
}

kg_status kg_matmul_ex(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                       const kg_matmul_opts *opts)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    kg_gemm_desc g;
    kg_status st = kg_gemm_describe(ctx, out, a, b, opts, &g);
    if (st == KG_OK)
        st = kgi_ready(ctx);
    if (st != KG_OK)
        return st;
    if (g.empty)
        return kgi_ok(ctx);
    kg_blas *bl;
    if ((st = kg_blas_ready(ctx, &bl)) != KG_OK)
        return st;
    const kg_gemm_backend be = opts ? opts->backend : KG_GEMM_AUTO;
    const double work = (double)g.batch * (double)g.m * (double)g.n * (double)g.k;
    const int use_lt = g.bias || g.epilogue != KG_EPILOGUE_NONE || be == KG_GEMM_CUBLASLT || !fits_int(&g) ||
                       (be == KG_GEMM_AUTO && work <= 0x1p30);
    if (g.fill)
        st = fill(ctx, bl, &g, out, opts ? opts->bias : NULL);
    else if (g.pack_x || g.pack_y || g.pack_d)
        st = run_packed(ctx, bl, &g, out, use_lt);
    else
        st = run_all(ctx, bl, &g, use_lt);
    if (st != KG_OK)
        return st;
    bl->issued = 1;
    return kgi_ok(ctx);
}

kg_status kg_matmul(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b)
{
    return kg_matmul_ex(ctx, out, a, b, NULL);
}

kg_status kg_set_tf32(kg_context *ctx, int enable)
{
    kg_blas *bl;
    kg_status st = kgi_ready(ctx);
    if (st == KG_OK)
        st = kg_blas_state(ctx, &bl);
    if (st != KG_OK)
        return st;
    bl->tf32 = enable != 0;
    return kgi_ok(ctx);
}

kg_status kg_gemm_reserve(kg_context *ctx, size_t pack_bytes)
{
    kg_blas *bl;
    void *area;
    kg_status st = kgi_ready(ctx);
    if (st == KG_OK)
        st = kg_blas_ready(ctx, &bl);
    if (st == KG_OK)
        st = kgi_pack_area(ctx, pack_bytes, &area);
    return st != KG_OK ? st : kgi_ok(ctx);
}

kg_status kg_gemm_prepare(kg_context *ctx) { return kg_gemm_reserve(ctx, KG_GEMM_PACK_BYTES); }
