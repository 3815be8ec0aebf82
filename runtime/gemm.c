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
#include "layout.h"

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

static const char *strides_str(char *buf, size_t len, const kg_tensor *t)
{
    return kg_shape_str(buf, len, t->ndim, t->strides);
}

static kg_status layout_error(kg_context *ctx, const kg_tensor *t, const char *name, const char *verb)
{
    char s[128], st[128];
    return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                   "invalid argument: matmul: %s %s with strides %s has no layout cuBLAS can %s: one of its last "
                   "two dims needs stride 1 and the other a stride >= that dim's extent (copy it to a contiguous "
                   "tensor first)",
                   name, kg_shape_str(s, sizeof s, t->ndim, t->shape), strides_str(st, sizeof st, t), verb);
}

/* Byte range [lo, hi) that t's elements span; empty when t has none. */
static void span(const kg_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    uint64_t last = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) {
            *lo = *hi = 0;
            return;
        }
        last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    }
    *lo = (uintptr_t)t->data;
    *hi = *lo + (last + 1) * kg_dtype_size(t->dtype);
}

static kg_status check_no_overlap(kg_context *ctx, const kg_tensor *out, const kg_tensor *in, const char *name)
{
    uintptr_t olo, ohi, ilo, ihi;
    span(out, &olo, &ohi);
    span(in, &ilo, &ihi);
    if (olo < ohi && ilo < ihi && olo < ihi && ilo < ohi)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: matmul: out overlaps %s (cuBLAS would read %s while writing out)", name,
                       name);
    return KG_OK;
}

static kg_status check_dtypes(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b)
{
    if (a->dtype != b->dtype)
        return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: a is %s, b is %s (a, b and out share one dtype)",
                       kg_dtype_name(a->dtype), kg_dtype_name(b->dtype));
    if (out->dtype != a->dtype)
        return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: out is %s but a and b are %s",
                       kg_dtype_name(out->dtype), kg_dtype_name(a->dtype));
    const unsigned accepted = 1u << KG_F32 | 1u << KG_F64 | 1u << KG_F16 | 1u << KG_BF16;
    if (!(accepted & (1u << a->dtype)))
        return kg_fail_dtype(ctx, "matmul", a->dtype, accepted);
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
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: a is %s, b is %s: inner dims %lld and %lld differ",
                       kg_shape_str(as, sizeof as, a->ndim, a->shape), kg_shape_str(bsh, sizeof bsh, b->ndim, b->shape),
                       (long long)K, (long long)K2);
    const int na = a1 ? 0 : a->ndim - 2, nbb = b1 ? 0 : b->ndim - 2;
    const int nb = na > nbb ? na : nbb;
    for (int i = 0; i < nb; i++) {
        const int ia = i - (nb - na), ib = i - (nb - nbb);
        const int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char ab[128], bb[128];
            return kg_fail(
                ctx, KG_ERR_SHAPE, "shape mismatch: matmul: a is %s, b is %s: batch dims %s and %s do not broadcast",
                kg_shape_str(as, sizeof as, a->ndim, a->shape), kg_shape_str(bsh, sizeof bsh, b->ndim, b->shape),
                kg_shape_str(ab, sizeof ab, na, a->shape), kg_shape_str(bb, sizeof bb, nbb, b->shape));
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
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: out is %s but a %s @ b %s is %s",
                       kg_shape_str(os, sizeof os, out->ndim, out->shape),
                       kg_shape_str(as, sizeof as, a->ndim, a->shape), kg_shape_str(bsh, sizeof bsh, b->ndim, b->shape),
                       kg_shape_str(es, sizeof es, nw, want));
    *nb_out = nb;
    return KG_OK;
}

static kg_status check_opts(kg_context *ctx, const kg_tensor *out, const kg_tensor *b, const kg_matmul_opts *o)
{
    if ((int)o->epilogue < 0 || o->epilogue >= KG_EPILOGUE_COUNT)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: matmul: epilogue %d is not a kg_epilogue",
                       (int)o->epilogue);
    if ((int)o->backend < 0 || o->backend >= KG_GEMM_BACKEND_COUNT)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: matmul: backend %d is not a kg_gemm_backend",
                       (int)o->backend);
    if (o->backend == KG_GEMM_CUBLAS && (o->bias || o->epilogue != KG_EPILOGUE_NONE))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: matmul: a bias or epilogue needs cuBLASLt, not the KG_GEMM_CUBLAS backend");
    const kg_tensor *bias = o->bias;
    if (!bias)
        return KG_OK;
    kg_status st = kg_check_tensor(ctx, bias, "bias");
    if (st != KG_OK)
        return st;
    const int64_t N = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    char s[128];
    if (bias->dtype != out->dtype)
        return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: matmul: bias is %s but out is %s",
                       kg_dtype_name(bias->dtype), kg_dtype_name(out->dtype));
    if (bias->ndim != 1 || bias->shape[0] != N)
        return kg_fail(ctx, KG_ERR_SHAPE, "shape mismatch: matmul: bias is %s but must be [%lld] (out's last dim)",
                       kg_shape_str(s, sizeof s, bias->ndim, bias->shape), (long long)N);
    if (N > 1 && bias->strides[0] != 1)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
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
    if (ext > 1 && (s_grow != ext * g_st || sd != ext * d_st))
        return 0;
    view g2 = *grow, d2 = *dv;
    if (into_rows) {
        g2.rows *= n, d2.rows *= n;
        if (ext <= 1)
            g2.rs = s_grow, d2.rs = sd;
    } else {
        g2.cols *= n, d2.cols *= n;
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

kg_status kg_gemm_describe(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                           const kg_matmul_opts *opts, kg_gemm_desc *g)
{
    static const kg_matmul_opts none = {NULL, KG_EPILOGUE_NONE, KG_GEMM_AUTO};
    const kg_matmul_opts *o = opts ? opts : &none;
    kg_status st = kg_check_tensor(ctx, out, "out");
    if (st == KG_OK)
        st = kg_check_tensor(ctx, a, "a");
    if (st == KG_OK)
        st = kg_check_tensor(ctx, b, "b");
    if (st != KG_OK)
        return st;
    if (a->ndim == 0 || b->ndim == 0)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
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
    if ((st = kg_check_no_self_overlap(ctx, out, "out")) != KG_OK)
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
    int64_t total = M * N;
    for (int i = 0; i < nb; i++)
        total *= bs[i];
    g->empty = total == 0;
    if (g->empty) /* nothing is read or written: any strides will do */
        return KG_OK;

    /* Orientation: out^T = b^T a^T when out is row-major (preferred), else
       out = a b when out is column-major. */
    const view dt = {N, M, vc.cs, vc.rs}, dn = vc;
    int64_t ld;
    if (map_out(&dt, &ld))
        g->swapped = 1;
    else if (!o->bias && map_out(&dn, &ld))
        g->swapped = 0;
    else if (o->bias && map_out(&dn, &ld)) {
        char s[128], t[128];
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: matmul: a bias needs out's last dim to have stride 1 (out %s has strides %s)",
                       kg_shape_str(s, sizeof s, out->ndim, out->shape), strides_str(t, sizeof t, out));
    } else
        return layout_error(ctx, out, "out", "write");
    view x, y, dv;
    int64_t *bx, *by;
    if (g->swapped) {
        x = (view){N, K, vb.cs, vb.rs}, y = (view){K, M, va.cs, va.rs}, dv = dt;
        bx = sb, by = sa, g->x = b->data, g->y = a->data;
    } else {
        x = va, y = vb, dv = dn;
        bx = sa, by = sb, g->x = a->data, g->y = b->data;
    }
    g->d = out->data;
    int t;
    if (K > 0 && !map_operand(&x, &t, &ld)) /* with K = 0 nothing is read */
        return layout_error(ctx, g->swapped ? b : a, g->swapped ? "b" : "a", "read");
    if (K > 0 && !map_operand(&y, &t, &ld))
        return layout_error(ctx, g->swapped ? a : b, g->swapped ? "a" : "b", "read");

    /* Batch dims: drop size 1, fold into one GEMM where the strides allow
       (never into D's rows with a bias, which runs along them), merge the
       rest where they chain, run the largest as the strided batch and loop
       over the others. */
    int n = 0;
    int64_t sz[KG_MAX_DIMS], s0[KG_MAX_DIMS], s1[KG_MAX_DIMS], s2[KG_MAX_DIMS];
    for (int i = 0; i < nb; i++)
        if (bs[i] != 1)
            sz[n] = bs[i], s0[n] = bx[i], s1[n] = by[i], s2[n] = sc[i], n++;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = n - 1; i >= 0; i--) {
            if (try_fold(&x, &y, &dv, sz[i], s0[i], s1[i], s2[i], 0, K > 0) ||
                (!g->bias && try_fold(&x, &y, &dv, sz[i], s0[i], s1[i], s2[i], 1, K > 0))) {
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
        if (m > 0 && s0[m - 1] == s0[i] * sz[i] && s1[m - 1] == s1[i] * sz[i] && s2[m - 1] == s2[i] * sz[i]) {
            sz[m - 1] *= sz[i], s0[m - 1] = s0[i], s1[m - 1] = s1[i], s2[m - 1] = s2[i];
            continue;
        }
        sz[m] = sz[i], s0[m] = s0[i], s1[m] = s1[i], s2[m] = s2[i], m++;
    }
    int big = -1;
    for (int i = 0; i < m; i++)
        if (big < 0 || sz[i] > sz[big])
            big = i;
    g->batch = 1;
    if (big >= 0) {
        if (sz[big] > INT_MAX)
            return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                           "invalid argument: matmul: a batch of %lld matrices exceeds cuBLAS's limit of %d",
                           (long long)sz[big], INT_MAX);
        g->batch = sz[big], g->sx = s0[big], g->sy = s1[big], g->sd = s2[big];
    }
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

/* K = 0 without a bias: D is zeros (relu and gelu of 0 are 0). One 2-d
   memset per matrix, or one for the whole batch when it is dense. */
static kg_status zero_fill(kg_context *ctx, const kg_gemm_desc *g)
{
    const size_t es = kg_dtype_size(g->dtype);
    const int dense = g->batch == 1 || g->sd == g->ldd * g->n;
    const int64_t per = dense ? 1 : g->batch;
    const size_t height = (size_t)(dense ? g->n * g->batch : g->n);
    int64_t idx[KG_MAX_DIMS] = {0};
    for (;;) {
        int64_t od = 0;
        for (int i = 0; i < g->nloop; i++)
            od += idx[i] * g->loop_sd[i];
        for (int64_t j = 0; j < per; j++) {
            char *d = (char *)g->d + (od + j * g->sd) * (int64_t)es;
            cudaError_t err = cudaMemset2DAsync(d, (size_t)g->ldd * es, 0, (size_t)g->m * es, height, ctx->stream);
            if (err != cudaSuccess)
                return kg_cuda_fail(ctx, err, "matmul with K = 0: cudaMemset2DAsync");
        }
        int i = g->nloop - 1;
        while (i >= 0 && ++idx[i] == g->loop_size[i])
            idx[i--] = 0;
        if (i < 0)
            return KG_OK;
    }
}

/* K = 0 with a bias: D = epilogue(bias) through cuBLASLt, as a K = 1
   product of zero operands from the context's zero buffer, tiled so each
   tile's operands fit in it. */
static kg_status bias_only(kg_context *ctx, kg_blas *bl, const kg_gemm_desc *g)
{
    const size_t es = kg_dtype_size(g->dtype);
    const int64_t cap = (int64_t)(bl->zeros_bytes / es);
    for (int64_t j0 = 0; j0 < g->n; j0 += cap)
        for (int64_t i0 = 0; i0 < g->m; i0 += cap) {
            kg_gemm_desc t = *g;
            t.m = g->m - i0 < cap ? g->m - i0 : cap;
            t.n = g->n - j0 < cap ? g->n - j0 : cap;
            t.k = 1;
            t.x = t.y = bl->zeros;
            t.trans_x = 0, t.ldx = t.m, t.trans_y = 1, t.ldy = t.n;
            t.sx = t.sy = 0;
            for (int i = 0; i < t.nloop; i++)
                t.loop_sx[i] = t.loop_sy[i] = 0;
            t.d = (char *)g->d + (i0 + j0 * g->ldd) * (int64_t)es;
            t.bias = (const char *)g->bias + i0 * (int64_t)es;
            kg_status st = run_all(ctx, bl, &t, 1);
            if (st != KG_OK)
                return st;
        }
    return KG_OK;
}

kg_status kg_matmul_ex(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b,
                       const kg_matmul_opts *opts)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    kg_gemm_desc g;
    kg_status st = kg_gemm_describe(ctx, out, a, b, opts, &g);
    if (st == KG_OK)
        st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    if (g.empty)
        return kg_ok(ctx);
    kg_blas *bl;
    if ((st = kg_blas_ready(ctx, &bl)) != KG_OK)
        return st;
    const kg_gemm_backend be = opts ? opts->backend : KG_GEMM_AUTO;
    const double work = (double)g.batch * (double)g.m * (double)g.n * (double)g.k;
    const int use_lt = g.bias || g.epilogue != KG_EPILOGUE_NONE || be == KG_GEMM_CUBLASLT || !fits_int(&g) ||
                       (be == KG_GEMM_AUTO && work <= 0x1p30);
    if (g.k == 0)
        st = g.bias ? bias_only(ctx, bl, &g) : zero_fill(ctx, &g);
    else
        st = run_all(ctx, bl, &g, use_lt);
    if (st != KG_OK)
        return st;
    bl->issued = 1;
    return kg_ok(ctx);
}

kg_status kg_matmul(kg_context *ctx, const kg_tensor *out, const kg_tensor *a, const kg_tensor *b)
{
    return kg_matmul_ex(ctx, out, a, b, NULL);
}

kg_status kg_set_tf32(kg_context *ctx, int enable)
{
    kg_blas *bl;
    kg_status st = kg_ready(ctx);
    if (st == KG_OK)
        st = kg_blas_state(ctx, &bl);
    if (st != KG_OK)
        return st;
    bl->tf32 = enable != 0;
    return kg_ok(ctx);
}

kg_status kg_gemm_prepare(kg_context *ctx)
{
    kg_blas *bl;
    kg_status st = kg_ready(ctx);
    if (st == KG_OK)
        st = kg_blas_ready(ctx, &bl);
    return st != KG_OK ? st : kg_ok(ctx);
}
