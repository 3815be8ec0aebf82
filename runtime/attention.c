/*
 * attention.c - validation and dispatch of kg_attention (kg_attention.h).
 *
 * Everything is checked on the host first (so a context without a device
 * still reports argument errors); then the generated tables
 * (kg_attn_table.h) give the kernel for q's dtype, the head dim and the mask
 * kind, and one launch covers the call: grid (query blocks, Hq, B). The
 * variant: on a compute capability 9.0 device the Hopper path (wgmma, sm_90a
 * machine code) where one was generated; f32: the split-TF32 variant, or
 * the narrow one where that grid would not give every multiprocessor a
 * block; else the portable path.
 */
#include <cuda.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "attention_check.h"
#include "attention_params.h"
#include "attention_pack.h"
#include "attention_tmap.h"
#include "attn_plan.h"
#include "internal.h"
#include "kg_attn_table.h"
#include "kg_table.h"

typedef struct args {
    const kg_tensor *out, *lse, *q, *k, *v, *mask;
} args;

static kg_status shape_error(kg_context *ctx, const args *a, const char *why)
{
    char q[96], k[96], v[96], o[96];
    return kg_fail(
        ctx, KG_ERR_SHAPE, "shape mismatch: attention: %s (q is %s, k is %s, v is %s, out is %s)", why,
        kg_shape_str(q, sizeof q, a->q->ndim, a->q->shape), kg_shape_str(k, sizeof k, a->k->ndim, a->k->shape),
        kg_shape_str(v, sizeof v, a->v->ndim, a->v->shape), kg_shape_str(o, sizeof o, a->out->ndim, a->out->shape));
}

static kg_status check_shapes(kg_context *ctx, const args *a)
{
    const kg_tensor *q = a->q, *k = a->k, *v = a->v, *out = a->out;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 || out->ndim != 4)
        return shape_error(ctx, a, "q, k, v and out must have 4 dims [B, H, S, D]");
    for (int d = 0; d < 4; d++)
        if (k->shape[d] != v->shape[d])
            return shape_error(ctx, a, "k and v must have the same shape");
    if (q->shape[0] != k->shape[0])
        return shape_error(ctx, a, "q and k must have the same batch size");
    if (q->shape[3] != k->shape[3])
        return shape_error(ctx, a, "q and k must have the same head dim");
    for (int d = 0; d < 4; d++)
        if (out->shape[d] != q->shape[d])
            return shape_error(ctx, a, "out must have q's shape");
    if (k->shape[1] == 0 ? q->shape[1] != 0 : q->shape[1] % k->shape[1] != 0)
        return shape_error(ctx, a, "q's heads must be a multiple of k's heads");
    kg_status st;
    if (a->lse && (st = kgi_attn_check_lse(ctx, "attention", a->lse, q)) != KG_OK)
        return st;
    if (a->mask && (st = kgi_attn_check_mask(ctx, "attention", a->mask, q, k)) != KG_OK)
        return st;
    return KG_OK;
}

static kg_status check_dtypes(kg_context *ctx, const args *a)
{
    const kg_dtype dt = a->q->dtype;
    const unsigned accepted = 1u << KG_F32 | 1u << KG_F64 | 1u << KG_F16 | 1u << KG_BF16;
    if (!(accepted & (1u << dt)))
        return kg_fail_dtype(ctx, "attention", dt, accepted);
    const kg_tensor *same[3] = {a->k, a->v, a->out};
    const char *names[3] = {"k", "v", "out"};
    for (int i = 0; i < 3; i++)
        if (same[i]->dtype != dt)
            return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: attention: q is %s but %s is %s", kg_dtype_name(dt),
                           names[i], kg_dtype_name(same[i]->dtype));
    if (a->lse && a->lse->dtype != KG_F32)
        return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: attention: lse must be f32, got %s",
                       kg_dtype_name(a->lse->dtype));
    if (a->mask && a->mask->dtype != KG_F32 && !(dt == KG_F64 && a->mask->dtype == KG_F64))
        return kg_fail(ctx, KG_ERR_DTYPE, "dtype mismatch: attention: mask must be f32%s, got %s",
                       dt == KG_F64 ? " or f64" : "", kg_dtype_name(a->mask->dtype));
    return KG_OK;
}

static kg_status check_overlap(kg_context *ctx, const args *a)
{
    const kg_tensor *outs[2] = {a->out, a->lse};
    const char *onames[2] = {"out", "lse"};
    const kg_tensor *ins[5] = {a->q, a->k, a->v, a->mask, a->out};
    const char *inames[5] = {"q", "k", "v", "mask", "out"};
    kg_status st = KG_OK;
    for (int i = 0; i < 2; i++)
        for (int j = 0; st == KG_OK && outs[i] && j < 4 + i; j++)
            if (ins[j])
                st = kgi_check_disjoint(ctx, "attention", outs[i], onames[i], ins[j], inames[j]);
    return st;
}

static int has_variant(kg_attn_variant v, kg_dtype dt, int slot, kg_attn_kind kind)
{
    return kg_attn_table[v][dt][slot][kind].threads > 0;
}

static int is_decode(kg_attn_variant v)
{
    return v == KG_ATTN_V_DECODE || v == KG_ATTN_V_DECODE2 || v == KG_ATTN_V_DECODE4;
}

/* the persistent Hopper variants (one block per multiprocessor) */
static int is_persist(kg_attn_variant v)
{
    return v == KG_ATTN_V_HOPPER_PERSIST || v == KG_ATTN_V_HOPPER_PERSIST_PP || v == KG_ATTN_V_HOPPER_PERSIST_BASE ||
           v == KG_ATTN_V_HOPPER_PERSIST_F2 || v == KG_ATTN_V_HOPPER_PERSIST_TS;
}

kg_attn_split kg_attn_plan_split(int64_t blocks, int64_t keys, int bn, int64_t slots, int max_splits, int64_t min_chunk,
                                 int fill, int forced)
{
    kg_attn_split r = {1, bn > 0 ? bn : 1};
    if (keys <= 0 || bn <= 0)
        return r;
    if (blocks <= 0 || blocks > ((int64_t)1 << 40)) { /* one split covering every key */
        r.chunk = keys > INT32_MAX ? INT32_MAX : (int)keys;
        return r;
    }
    if (slots < 1)
        slots = 1;
    if (max_splits > KG_ATTN_MAX_SPLITS)
        max_splits = KG_ATTN_MAX_SPLITS;
    const int64_t tiles = (keys + bn - 1) / bn;
    int64_t s = 1;
    if (forced > 0) {
        s = forced;
        if (s > tiles)
            s = tiles;
    } else {
        int64_t most = tiles / KG_ATTN_MIN_SPLIT_TILES;
        if (min_chunk > 0 && most > keys / min_chunk)
            most = keys / min_chunk;
        if (most > max_splits)
            most = max_splits;
        /* as many splits as keep every block resident at once: memory-bound
           blocks share the bandwidth, so one full wave is what counts */
        s = slots / blocks;
        if (s > most)
            s = most;
        if (s < 1)
            s = 1;
        /* fill: then more splits, up to most, until the blocks fill their
           waves of `slots` to at least fill percent */
        while (fill > 0 && s < most && blocks * s * 100 < fill * ((blocks * s + slots - 1) / slots) * slots)
            s++;
    }
    if (s > max_splits)
        s = max_splits;
    if (s < 1)
        s = 1;
    const int64_t per = (keys + s - 1) / s;
    const int64_t chunk = (per + bn - 1) / bn * bn;
    r.chunk = chunk > INT32_MAX ? INT32_MAX / bn * bn : (int)chunk;
    r.splits = (int)((keys + r.chunk - 1) / r.chunk);
    return r;
}

/* the key tiles each block of the decode grid walks, x the grid's waves */
static int64_t dec_tile_cost(int64_t blocks, int64_t vr, int64_t keys, int bn, int64_t slots)
{
    const kg_attn_split sp =
        kg_attn_plan_split(blocks, keys, bn, slots, KG_ATTN_MAX_SPLITS, KG_ATTN_CHUNK_PER_ROW * vr, 0, 0);
    const int64_t chunk = sp.chunk < keys ? sp.chunk : keys;
    return (blocks * sp.splits + slots - 1) / slots * ((chunk + bn - 1) / bn);
}

int kg_attn_dec_tile_rows(int64_t rows, int64_t heads, int64_t keys, int bn, int64_t slots)
{
    if (rows > 32)
        return 64;
    if (rows <= 16 || heads <= 0 || heads > ((int64_t)1 << 30) || keys <= 0 || bn <= 0)
        return rows <= 16 ? 16 : 32;
    if (slots < 1)
        slots = 1;
    const int64_t c32 = dec_tile_cost(heads, rows, keys, bn, slots), c16 = dec_tile_cost(2 * heads, 16, keys, bn, slots);
    return c16 * KG_ATTN_DEC_TILE16_COST < c32 * 10 ? 16 : 32;
}

/* kg_test_attn_dec_tile / kg_test_attn_dec_chunk (test and benchmark
   hooks, process-wide): the decode tile rule (-1 by the rows alone, 0 the
   runtime's choice) and the launch planner's fewest keys a valid row (0
   the runtime's KG_ATTN_SPLIT_PER_ROW) */
static int dec_tile_force, dec_chunk_force;

void kg_test_attn_dec_chunk(int keys_per_row) { __atomic_store_n(&dec_chunk_force, keys_per_row, __ATOMIC_RELAXED); }

void kg_test_attn_dec_tile(int on) { __atomic_store_n(&dec_tile_force, on, __ATOMIC_RELAXED); }

/* The Hopper path on compute capability 9.0 (its sm_90a code runs nowhere
   else): persistent up to 4096 keys, and at any length at D 32, D 64 and
   D 128 (not causal since session 23); else the grid kernels (the long-key variant from KG_ATTN_LONG_KEYS keys
   on); the narrow variant when the portable grid (bh x query blocks) would
   leave multiprocessors without a block; else the portable path. A variant
   forced by a test is taken where it exists and can run. */
static kg_attn_variant choose_variant(const kg_context *ctx, kg_dtype dt, int slot, kg_attn_kind kind, int64_t bh,
                                      int64_t sq, int64_t sk, int64_t group)
{
    const int sm90 = ctx->cc_major == 9 && ctx->cc_minor == 0;
    const int f = (int)ctx->test_force[KGI_TEST_ATTN_VARIANT];
    /* the decode kernels index packed rows (group x Sq) with 32-bit ints */
    const int dec_ok = group * sq <= INT32_MAX / 2;
    /* the persistent variant numbers its work tiles (B x Hq x query blocks)
       with 32-bit ints, and a tile's number plus the grid too */
    const int persist_ok = bh * ((sq + 127) / 128) <= INT32_MAX - (1 << 20);
    if (f >= 0 && f < KG_ATTN_V_COUNT && has_variant((kg_attn_variant)f, dt, slot, kind) &&
        (!kg_attn_variant_sm90a[f] || sm90) && (!is_decode((kg_attn_variant)f) || dec_ok) &&
        (!is_persist((kg_attn_variant)f) || persist_ok))
        return (kg_attn_variant)f;
    /* short queries: the packed rows (group x Sq) in as few tiles as possible */
    if (sq <= KG_ATTN_DECODE_MAX_SQ && has_variant(KG_ATTN_V_DECODE, dt, slot, kind)) {
        if (group * sq > 32 && has_variant(KG_ATTN_V_DECODE4, dt, slot, kind))
            return KG_ATTN_V_DECODE4;
        /* 17-32 rows: two 16-row tiles where the 32-row grid would leave
           the GPU under-filled (kg_attn_dec_tile_rows; head dims 64 and 128,
           whose launches count one block a multiprocessor) */
        const int D = kg_attn_dims[slot];
        if (group * sq > 16 && (D == 64 || D == 128) && __atomic_load_n(&dec_tile_force, __ATOMIC_RELAXED) >= 0 &&
            kg_attn_dec_tile_rows(group * sq, bh / group, sk, kg_attn_dec_bn[slot], ctx->sm_count) == 16)
            return KG_ATTN_V_DECODE;
        if (group * sq > 16 && has_variant(KG_ATTN_V_DECODE2, dt, slot, kind))
            return KG_ATTN_V_DECODE2;
        return KG_ATTN_V_DECODE;
    }
    /* the ping-pong variant where it measured faster (H200, bf16, two runs,
       us, Hopper / pp: D 64 S 1k 475 / 454-456, causal 314 / 297-310; D 32 S 4k
       1237-1241 / 1210-1217 (before session 6); D 256 S 4k causal 630-716 /
       618-701); level or
       slower elsewhere (D 64 S 4k: the long variant 1540 / pp 1565, causal S
       16k long 2962 / pp 3082; D 96 1096 / 1111; D 128 S 4k causal 1335 /
       1366; GQA D 128 causal 1314 / 1356); causal D 256 left it in session 16 (below) */
    const int D = kg_attn_dims[slot];
    /* the persistent variants (D 64-128) up to 4096 keys (causal at D 128:
       2048; session 12 widened both, below), with the ping-pong turns when
       causal. H200, same run, us, the
       grid-mode default / persistent / persistent pp: D 64 S 1k 456 / 429 /
       436, causal 305 / 288 / 277; S 4k 1560 / 1527 / 1539, causal 900 / 852
       / 837; D 96 S 4k 1111 / 1076 / 1083; D 128 S 1k 690 / 679 / 679,
       causal 445 / 433 / 423; S 4k 2525 / 2533 / 2492, causal 1393 / 1408 /
       1411. Longer keys favoured the grid (the hardware's block scheduler
       balanced long causal launches better than the fixed turns, before the
       work queue): D 64 S 12.8k long 3533 / 3719, D 128 S 13.5k causal 1690
       / 1929. */
    /* (Session 6, H200, r2, us: since the producer's row copies and the
       folded softmax, D 64 with 2048-4096 keys and no mask (the long variant
       has no mask kernels) is faster on the 192-key tiles: S 4k long 1334,
       persistent 1406, grid 1375; causal level, long 757 / persistent pp
       769.) */
    /* Session 9 (H200, r1, us, with the bulk tensor copies, bf16 / f16):
       causal D 64 too, S 4k: persistent long 706 / 719, persistent pp (the
       old pick) 741 / 750, persistent 727 / 753, grid long 734 / 758. */
    /* (Session 15, H200, r2, us, in turn, best of 3: causal D 64 up to 4096
       keys on the plain persistent kernel, since its 192-row tiles there
       (gen/attention.lua): S 4k causal 627.7 against persistent long's
       670.1.) */
    /* (The persistent kernel on those 192-key tiles (session 7, H200, us:
       r3 S 4k 1292 against the grid-mode long variant's 1329; r4 as the
       default 1301, cuDNN 1144), since the work queue (session 12) at any
       key count: the queue balances the long launches that favoured the
       grid before (above). H200, session 12 r2, us, timed in turn (best
       of 3), persistent long / grid long: S 16k 4616.6 / 4719.4, causal
       2429.7 / 2465.6.) */
    /* Since session 16, D 32 and 64 take the plain persistent kernel (three
       consumer warpgroups, 192-row tiles; gen/attention.lua) at every key
       count, causal or not (H200, s16r2, us, in turn, best of 3, bf16: D 64
       S 4k, persistent long (the default from 2048 keys before) / plain
       persistent 1181.9 / 1110.7, S 16k 4629.6 / 4259.6, causal 2379.9 /
       2254.3, GQA Hq 32 Hkv 4 S 15901 4289.9 / 4164.2; D 32 S 4k, grid /
       plain persistent 1173.9 / 949.3). */
    /* causal: the ping-pong turns, but not at D 64 (session 9, r1, us, bf16
       / f16, S 1k causal: persistent 245.0 / 245.9, persistent pp 252.9 /
       255.0; at D 128 pp stays ahead: 336 / 347 against 358 / 363), up to
       4096 keys; beyond, with the work queue, causal D 128 on the plain
       persistent kernel (D 96 and not causal: the grid, as before). H200,
       session 12 r2, us, timed in turn (best of 3), bf16 D 128, persistent
       pp / persistent / grid (the default before): S 1k causal 313.7 /
       313.9 / 364.1 (f16 323.7 / 321.5 / 357.9), S 4k causal 956.2 /
       1010.6 / 1088.5 (GQA Hq 32 Hkv 8: 1022.7 / 989.3 / 1060.1), S 16k
       causal 3847.7 / 3714.7 / 3723.6; not causal S 16k, persistent /
       grid 7165.2 / 7157.4. */
    /* Since session 17, causal D 128 up to 2048 keys on the plain
       persistent kernel too (H200, us, in turn, best of 3, pp / plain: s17r1
       bf16 S 1k causal 316.8 / 312.2; s17r2 bf16 314.1 / 309.1, f16 321.2 /
       316.6; s17r3, as the default, bf16 317.8 / 309.9, f16 323.2 /
       315.8; at S 4k mixed: s17r2 bf16 941.7 / 1028.2, f16 1029.5 / 996.0,
       GQA Hq 32 Hkv 8 1045.3 / 1002.7; s17r1 bf16 1042.4 / 1011.3, GQA
       1014.6 / 994.4). */
    /* Since session 23 D 128 not causal takes the persistent f2 kernel
       beyond 4096 keys too (the grid kernel before): H200, s23r1, same
       process, in turn, best of 3, grid / persistent f2, us: bf16 B 4 H 16
       S 8k 3619.6 / 3500.5, B 2 S 16k 7176.5 / 6927.7, f16 S 16k 7463.4 /
       7242.0, GQA Hq 32 Hkv 4 S 9000 2247.9 / 2146.9; s23r2 as the
       default: bf16 S 8k 3657.9 / 3510.8, S 16k 7174.1 / 6983.8, f16 S 16k
       7463.0 / 7245.5, GQA S 9000 2240.4 / 2147.1, f16 B 1 H 16 S 12000
       2057.4 / 1962.0, bf16 B 3 Hq 32 Hkv 8 S 5000 2177.9 / 2065.1. (D 96
       not causal stays on the grid: s23r2 f16 B 2 Hq 16 Hkv 4 S 6000 grid
       872.0, persistent 901.8.) */
    if (sm90 && persist_ok && (sk <= 4096 || D <= 64 || (D == 128 && kind != KG_ATTN_MASK))) {
        const kg_attn_variant pv = kind == KG_ATTN_CAUSAL && D > 64 && sk <= 4096 && (D != 128 || sk > 2048)
                                       ? KG_ATTN_V_HOPPER_PERSIST_PP
                                       : KG_ATTN_V_HOPPER_PERSIST;
        /* Since session 22, D 128 on the plain persistent kernel takes f2 (a
           tile's second Q K^T under its first softmax) when not causal, and
           causal beyond 4096 keys; causal up to 2048 keys it lost. H200, us,
           in turn, best of 3, plain / f2, s22r1: bf16 S 1k 470.8 / 463.4, S
           4k 1862.9 / 1824.9, f16 S 4k 1922.8 / 1883.7, GQA Hq 32 Hkv 8 S
           10297 causal 1549.2 / 1519.6; S 1k causal bf16 313.9 / 315.6, f16
           323.5 / 332.3; s22r2, as the default: bf16 S 1k 454.9 / 446.6, S
           4k 1817.2 / 1780.8, S 16k causal 3646.1 / 3611.1, f16 S 1k 495.7 /
           457.8, S 4k 1877.3 / 1832.2, S 16k causal 3789.3 / 3720.9, GQA
           1507.6 / 1484.9; s22r3 the same: gen/attention.lua. */
        if (pv == KG_ATTN_V_HOPPER_PERSIST && D == 128 && (kind == KG_ATTN_NONE || sk > 4096) &&
            has_variant(KG_ATTN_V_HOPPER_PERSIST_F2, dt, slot, kind))
            return KG_ATTN_V_HOPPER_PERSIST_F2;
        /* Since session 32 (round s31r1, pre31; NVIDIA H100 80GB HBM3),
           the plain kernel's D 128 causal launches (up to 2048 keys) take
           "ts": each warpgroup's output rows by bulk tensor stores, the
           same bits. us, in turn, best of 3, plain / ts: bf16 B 32 H 16 S
           1k causal 309.0 / 300.9, f16 318.5 / 310.8, bf16 B 4 47.7 /
           45.8, B 16 S 2k 519.5 / 507.2, B 64 S 512 229.9 / 221.8, seeded
           causal rows 1.009-1.027x; not causal (on f2) it lost (f16 B 8 S
           2k 438.7 / 472.2, bf16 B 8 Hq 32 Hkv 8 S 1910 740.4 / 812.4):
           gen/attention.lua. */
        if (pv == KG_ATTN_V_HOPPER_PERSIST && D == 128 && kind == KG_ATTN_CAUSAL && sk <= 2048 &&
            has_variant(KG_ATTN_V_HOPPER_PERSIST_TS, dt, slot, kind))
            return KG_ATTN_V_HOPPER_PERSIST_TS;
        if (has_variant(pv, dt, slot, kind))
            return pv;
    }
    /* D 32 left the ping-pong variant in session 6 (H200, r2, us, grid /
       pp, now that only the grid variant folds the softmax scale: S 4k 1216
       / 1294, S 14k causal 1896 / 1947), and causal D 256 in session 16
       (H200, s16r3, us, in turn, best of 3, pp / grid: f16 B 3 H 16 S 4025
       673.1 / 648.4, bf16 B 6 Hq 32 Hkv 4 S 2140 888.8 / 842.1) */
    const int pp = D == 64 && sk < KG_ATTN_LONG_KEYS;
    if (sm90 && pp && has_variant(KG_ATTN_V_HOPPER_PP, dt, slot, kind))
        return KG_ATTN_V_HOPPER_PP;
    if (sm90 && sk >= KG_ATTN_LONG_KEYS && has_variant(KG_ATTN_V_HOPPER_LONG, dt, slot, kind))
        return KG_ATTN_V_HOPPER_LONG;
    /* D 256 not causal: the grid kernel with f2 (a tile's second Q K^T under
       its first softmax) since session 22 (H200, s22r2, us, in turn, best
       of 3, grid / f2: f16 B 5 Hq 32 Hkv 4 S 1632 686.1 / 675.6; s22r3
       754.5 / 712.9, bf16 B 2 H 16 S 4k 860.1 / 800.0; causal it lost:
       gen/attention.lua) */
    if (sm90 && has_variant(KG_ATTN_V_HOPPER_F2, dt, slot, kind))
        return KG_ATTN_V_HOPPER_F2;
    if (sm90 && has_variant(KG_ATTN_V_HOPPER, dt, slot, kind))
        return KG_ATTN_V_HOPPER;
    /* f32: split TF32 on the tensor cores (compute capability 8.0 on: every
       arch of the bundle; H200, session 10 r3, us, same process, FFMA /
       split TF32: [2,16,4096,128] 6959 / 5171, causal 4011 / 2860, D 64 S
       4k 8515 / 5142, D 256 S 4k causal 10838 / 6552), unless its grid would
       leave multiprocessors without a block: then the narrow FFMA variant
       (r2: [2,8,128,64] causal 9.5 us, split TF32 14.0) */
    const kg_attn_variant wide = has_variant(KG_ATTN_V_X3, dt, slot, kind) ? KG_ATTN_V_X3 : KG_ATTN_V_PORTABLE;
    const kg_attn_entry *e = &kg_attn_table[wide][dt][slot][kind];
    if (has_variant(KG_ATTN_V_NARROW, dt, slot, kind) && bh * ((sq + e->bm - 1) / e->bm) < ctx->sm_count)
        return KG_ATTN_V_NARROW;
    return wide;
}

static kg_status raise_smem(kg_context *ctx, int kernel, int smem)
{
    cudaKernel_t kern;
    kg_status st = kg_kernel(ctx, kernel, &kern);
    if (st != KG_OK)
        return st;
    cudaError_t err =
        cudaKernelSetAttributeForDevice(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem, ctx->device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return kg_cuda_fail(ctx, err, "raising the attention kernel's shared memory limit");
    }
    return KG_OK;
}

/* The fused merge (one block per row tile) reads at most this many bytes
   of partials (splits x valid rows x D floats); more go to the combine
   kernel. H200 (window 2, 33 decode shapes, both forced): the combine kernel
   as fast or faster everywhere but within noise (at most 0.3 us slower), up
   to 10% faster where many rows split (Sq 16: 125.6 us against 139.6; MQA
   B 8: 19.3 against 30.2): so always the combine kernel. */
#define KG_ATTN_FUSED_MERGE_BYTES ((int64_t)0)
/* kg_test_attn_dec_host (a test and benchmark hook, process-wide): -1
   main's host path before session 21 (q's tensor map encoded, the kernel's
   shared memory limit set at every call, the runtime's launches), 1 the
   maps and limit of dec_tmaps_of and dec_raise_smem with the runtime's
   launches, 0 the runtime's: those and the driver's launches
   (launch_pdl). */
static int dec_host_force;

void kg_test_attn_dec_host(int on) { __atomic_store_n(&dec_host_force, on, __ATOMIC_RELAXED); }

/* attention_decode.cuh's dflags bit: the combine kernel lets the next grid
   launch before its wait for the decode grid */
#define KG_DEC_COMB_EARLY 2u
/* attention_decode.cuh's dflags bit (mergers in bits 8-15): the decode
   grid's last blocks of each row tile merge it, no combine grid */
#define KG_DEC_TAIL 4u

/* kg_test_attn_dec_kflags (a test and benchmark hook, process-wide): the
   kernels' bits above; -1 none, 0 the runtime's (kg_attn_dec_comb_early) */
static int dec_kflags_force, dec_kflags_last;

void kg_test_attn_dec_kflags(int bits) { __atomic_store_n(&dec_kflags_force, bits, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_kflags(void) { return __atomic_load_n(&dec_kflags_last, __ATOMIC_RELAXED); }

int kg_attn_dec_comb_early(int64_t blocks, int64_t sms) { return blocks > 0 && sms > 0 && 2 * blocks <= sms; }

/* cuLaunchKernelEx, from the driver (looked up once; NULL where the driver
   has none) */
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
static pthread_once_t launch_once = PTHREAD_ONCE_INIT;
static launch_ex_fn launch_ex;

/* A driver entry point by name (CUDA 12.0's version of it), or NULL where
   the driver has none; a failed lookup's error is cleared so that it does
   not surface at a later, unrelated call. */
static void *driver_entry(const char *name)
{
    void *f = NULL;
    enum cudaDriverEntryPointQueryResult r;
    if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &r) == cudaSuccess &&
        r == cudaDriverEntryPointSuccess && f)
        return f;
    cudaGetLastError();
    return NULL;
}

static void launch_find(void) { launch_ex = (launch_ex_fn)driver_entry("cuLaunchKernelEx"); }

/* One launch of the decode path: with programmatic dependent launch on
   compute capability 9.0 and up (the kernels wait for the previous grid
   before any global access, attention_decode.cuh), so that a launch's start
   overlaps the end of the grid before it; a test can turn it off. */
static kg_status launch_pdl(kg_context *ctx, int kernel, dim3 grid, dim3 block, void **argv, size_t smem)
{
    if (ctx->cc_major < 9 || ctx->test_force[KGI_TEST_ATTN_PDL] == 0)
        return kg_launch(ctx, kernel, grid, block, argv, smem);
    cudaKernel_t kern;
    kg_status st = kg_kernel(ctx, kernel, &kern);
    if (st != KG_OK)
        return st;
    if (__atomic_load_n(&dec_host_force, __ATOMIC_RELAXED) == 0) {
        /* the driver's launch (a kernel handle is a CUkernel): host time a
           call, µs, runtime's / driver's launches, H200 host, s21r1 and
           s21r2, 6 decode rows each: 6.60 / 6.59, 6.77 / 6.41, 6.67 / 6.55,
           6.86 / 6.52, 6.22 / 6.31, 7.18 / 6.84; 6.25 / 6.00, 6.13 / 6.02,
           6.13 / 6.01, 6.25 / 5.94, 6.33 / 6.01, 5.86 / 5.68. Where it
           fails (e.g. no context current on this thread yet), the
           runtime's below, which makes it current and reports errors. */
        pthread_once(&launch_once, launch_find);
        if (launch_ex) {
            CUlaunchAttribute a;
            memset(&a, 0, sizeof a);
            a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            a.value.programmaticStreamSerializationAllowed = 1;
            const CUlaunchConfig c = {.gridDimX = grid.x,
                                      .gridDimY = grid.y,
                                      .gridDimZ = grid.z,
                                      .blockDimX = block.x,
                                      .blockDimY = block.y,
                                      .blockDimZ = block.z,
                                      .sharedMemBytes = (unsigned)smem,
                                      .hStream = (CUstream)ctx->stream,
                                      .attrs = &a,
                                      .numAttrs = 1};
            if (launch_ex(&c, (CUfunction)(void *)kern, argv, NULL) == CUDA_SUCCESS)
                return KG_OK;
        }
    }
    cudaLaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = ctx->stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    const cudaError_t err = cudaLaunchKernelExC(&cfg, (const void *)kern, argv);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return kg_cuda_fail(ctx, err, "launching an attention decode kernel");
    }
    return KG_OK;
}

/* kg_test_attn_dec_spread (a test and benchmark hook, process-wide): 1 or
   -1 forces the decode launch's one-block-per-multiprocessor padding (below)
   on or off; 0 the runtime's choice. */
static int dec_spread_force, dec_spread_last;

void kg_test_attn_dec_spread(int on) { __atomic_store_n(&dec_spread_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_spread(void) { return __atomic_load_n(&dec_spread_last, __ATOMIC_RELAXED); }

/* kg_test_attn_dec_fill (a test and benchmark hook, process-wide): -1
   plans the decode splits without the fill of waves; 0 the runtime's
   choice. */
static int dec_fill_force, dec_fill_last;

void kg_test_attn_dec_fill(int on) { __atomic_store_n(&dec_fill_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_fill(void) { return __atomic_load_n(&dec_fill_last, __ATOMIC_RELAXED); }

/* kg_test_attn_dec_stages / kg_test_attn_dec_late (test and benchmark
   hooks, process-wide): the decode pipeline's stages on bulk tensor copies
   (-1 the kernel's own, 0 the runtime's choice) and its PDL trigger (1
   after the wait for the previous grid, -1 at the start, 0 the runtime's
   choice) */
static int dec_stages_force, dec_stages_last, dec_late_force, dec_late_last;

void kg_test_attn_dec_stages(int stages) { __atomic_store_n(&dec_stages_force, stages, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_stages(void) { return __atomic_load_n(&dec_stages_last, __ATOMIC_RELAXED); }
void kg_test_attn_dec_late(int on) { __atomic_store_n(&dec_late_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_late(void) { return __atomic_load_n(&dec_late_last, __ATOMIC_RELAXED); }

int64_t kg_attn_dec4_smem(int64_t rows_tile, int64_t D, int64_t bn, int stages)
{
    if (rows_tile < 1 || rows_tile > 64 || D < 64 || D > 256 || bn < 1 || bn > 256 || stages < 2 ||
        stages > KG_DEC_MAX_STAGES)
        return -1;
    const int64_t dp = (D + 63) / 64 * 64; /* whole 64-element panels */
    const int64_t pipe = rows_tile * (D + 8) * 2 + 1024 + (int64_t)stages * 2 * bn * dp * 2;
    /* the warps' merge (one warp along the keys: rows x (D + 10) floats) and
       gen/attention.lua's 256 floats a row */
    int64_t merge = rows_tile * (D + 10) * 4;
    if (merge < 256 * rows_tile * 4)
        merge = 256 * rows_tile * 4;
    return pipe > merge ? pipe : merge;
}

int kg_attn_dec_pair_stages(int64_t rows_tile, int64_t D, int64_t bn, int most)
{
    if (most > KG_DEC_MAX_STAGES)
        most = KG_DEC_MAX_STAGES;
    for (int s = most; s >= 2; s--) {
        const int64_t need = kg_attn_dec4_smem(rows_tile, D, bn, s);
        if (need > 0 && need <= KG_ATTN_DEC_PAIR_SMEM)
            return s;
    }
    return 0;
}

int kg_attn_dec_pair_rule(int64_t row_tiles, int64_t blocks, int splits, int chunk, int pair_splits, int pair_chunk,
                          int bn, int64_t sms, int def_per_sm)
{
    if (row_tiles < 1 || blocks < row_tiles || blocks > ((int64_t)1 << 40) || splits < 1 || pair_splits < 1 ||
        splits > (1 << 20) || pair_splits > (1 << 20) || chunk < 1 || pair_chunk < 1 || bn < 1 || sms < 1 ||
        sms > (1 << 20) || def_per_sm < 1)
        return 0;
    if (row_tiles < 2 || def_per_sm > 1)
        return 0;
    const int64_t nd = blocks * splits, np = blocks * pair_splits;
    if (np <= sms)
        return 0;
    const int64_t wd = (chunk + bn - 1) / bn, wp = (pair_chunk + bn - 1) / bn; /* key tiles a block */
    /* the critical paths in the time of a key tile of one block alone,
       x TWO_Q: a wave of the default (one block a multiprocessor) TWO_Q *
       wd; a full wave of the pair's 2 x sms blocks 8 * wp (each of two
       blocks at TWO_Q / 8 of one block's rate), a last wave of at most sms
       blocks TWO_Q * wp */
    const double q = KG_ATTN_DEC_PAIR_TWO_Q; /* (doubles: no overflow; exact below 2^53) */
    const double td = (double)((nd + sms - 1) / sms) * (double)wd * q;
    const int64_t full = np / (2 * sms), rem = np % (2 * sms);
    const double tp = (double)full * 8 * (double)wp + (rem > sms ? 8 * (double)wp : rem > 0 ? q * (double)wp : 0);
    return td * 100 >= tp * KG_ATTN_DEC_PAIR_GAIN_PCT;
}

/* kg_test_attn_dec_pair (a test and benchmark hook, process-wide): 1 the
   session 31 candidate (two 64-row decode blocks a multiprocessor) wherever
   it applies, 2 where kg_attn_dec_pair_rule says so, -1 off, 0 the
   runtime's choice: the rule (round s34r1, H100) */
static int dec_pair_force, dec_pair_last;

void kg_test_attn_dec_pair(int on) { __atomic_store_n(&dec_pair_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_pair(void) { return __atomic_load_n(&dec_pair_last, __ATOMIC_RELAXED); }

int kgi_attn_dec_pair_mode(void)
{
    const int f = __atomic_load_n(&dec_pair_force, __ATOMIC_RELAXED);
    return f == 0 ? 2 : f == 1 || f == 2 ? f : 0;
}

int kg_attn_dec_tail_mergers(int64_t tiles, int splits, int64_t items, int lanes, int64_t sms)
{
    if (tiles < 1 || splits < 2 || items < 1 || lanes < 1 || lanes > 128 || sms < 2)
        return 0;
    const int64_t per = 128 / lanes, passes = (items + per - 1) / per, cap = (sms - 1) / tiles + 1;
    int64_t k = passes < splits ? passes : splits;
    k = k < cap ? k : cap;
    return (int)(k > 255 ? 255 : k);
}

int kg_attn_dec_tail_rule(int64_t nblocks, int64_t sms, int64_t kv_bytes, int splits, int64_t rows)
{
    const int64_t most = rows >= KG_ATTN_DEC_TAIL_ROWS ? KG_ATTN_DEC_TAIL_BYTES_ROWS : KG_ATTN_DEC_TAIL_BYTES;
    return nblocks > 0 && nblocks <= sms && kv_bytes >= 0 && kv_bytes <= most && splits > 1 &&
           splits <= KG_ATTN_DEC_TAIL_SPLITS;
}

int kg_attn_merge_lanes(int splits)
{
    int g = 1;
    while (g < 32 && g * KG_ATTN_MERGE_LOADS < splits)
        g *= 2;
    return g;
}

/* kg_test_attn_dec_lanes (a test and benchmark hook, process-wide): a
   power of two up to 32 forces the decode merge's lanes; 0 the runtime's
   choice. */
static int dec_lanes_force, dec_lanes_last;

void kg_test_attn_dec_lanes(int lanes) { __atomic_store_n(&dec_lanes_force, lanes, __ATOMIC_RELAXED); }
int kg_test_last_attn_dec_lanes(void) { return __atomic_load_n(&dec_lanes_last, __ATOMIC_RELAXED); }

/* kg_test_attn_tma (a test and benchmark hook, process-wide): -1 keeps the
   Hopper prefill and the decode kernels on cp.async copies; 0 or 1 the
   runtime's choice (bulk tensor copies wherever the maps can be encoded). */
static int tma_force, tma_last;

void kg_test_attn_tma(int on) { __atomic_store_n(&tma_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_tma(void) { return __atomic_load_n(&tma_last, __ATOMIC_RELAXED); }

/* kg_test_attn_queue (a test and benchmark hook, process-wide): the
   persistent kernels' work queue (-1 never; 0 or 1 the runtime's choice,
   the queue wherever the scratch is there) */
static int queue_force, queue_last;

void kg_test_attn_queue(int on) { __atomic_store_n(&queue_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_queue(void) { return __atomic_load_n(&queue_last, __ATOMIC_RELAXED); }

/* kg_test_attn_xorder / kg_test_attn_lclaim (test and benchmark hooks,
   process-wide): the persistent kernels' tile order across batches and late
   claim (kg_attn_persist_sched): -1 never (the order and claim before
   session 30), 0 the runtime's rule, 1 on every persistent launch (the
   order: causal ones). */
static int xorder_force, xorder_last, lclaim_force, lclaim_last;

/* whether the last prefill launch stored its output by bulk tensor copies
   (the "ts" variant with the output's tensor map set) */
static int tmo_last;

int kg_test_last_attn_tmo(void) { return __atomic_load_n(&tmo_last, __ATOMIC_RELAXED); }

void kg_test_attn_xorder(int on) { __atomic_store_n(&xorder_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_xorder(void) { return __atomic_load_n(&xorder_last, __ATOMIC_RELAXED); }
void kg_test_attn_lclaim(int on) { __atomic_store_n(&lclaim_force, on, __ATOMIC_RELAXED); }
int kg_test_last_attn_lclaim(void) { return __atomic_load_n(&lclaim_last, __ATOMIC_RELAXED); }

/* Since session 30 the plain persistent kernel's causal launches hand
   their tiles out heaviest first across batches (KG_ATTN_XORDER_PAIRS =
   the B x Hq (batch, head) pairs ordered together, in sections of equal
   sizes within the same 16 MB L2 budget of K + V; attention_sm90.cuh
   coords()) rather than batch by batch, and a block takes its next tile
   once the current one's loads are issued (KG_ATTN_LATE_CLAIM = 1) rather
   than as it starts it. The
   order before left the last batch's heaviest tiles to the end (B 4 H 16
   S 1k D 64: its 8-key-tile tiles, 288-303 of 384), and the claim at the
   start gave each tile to the block that had started its last tile first,
   not to the one free first: block ends 20.3 / 29.1 / 39.3 us (min /
   median / max), which a simulation of that order and claim with session
   21's tile costs reproduces (19.0 / 27.7 / 38.4). NVIDIA H100, round
   s30r2 (same process, best of 3 in turn, us, before / both): faster on
   all 16 causal rows of the plain variant (bf16 B 4 H 16 S 1k D 64 42.8 ->
   34.4, B 3 H 20 S 4k 315.9 -> 281.5, B 1 S 2k 40.0 -> 33.8, B 32 S 1k
   228.2 -> 227.8); on the other persistent variants they lost (f16 B 2
   Hq 32 Hkv 4 S 6000 D 128, f2: 1010.4 -> 1068.8; bf16 B 4 S 4k D 128,
   pp: 477.9 -> 528.1), so those, and every launch that is not causal
   (the late claim x1.001-1.005 there), keep the order and claim before. */
KG_API void kg_attn_persist_sched(int variant, int causal, int64_t pairs, int xorder, int lclaim, int32_t *xorder_pairs,
                                  int32_t *late_claim)
{
    /* (ts, the D 128 causal default since session 32: the plain kernel's
       causal launches with bulk tensor stores, so its schedule) */
    const int rule = (variant == KG_ATTN_V_HOPPER_PERSIST || variant == KG_ATTN_V_HOPPER_PERSIST_TS) && causal;
    *xorder_pairs = causal && (xorder > 0 || (xorder == 0 && rule)) ? (int32_t)pairs : 0;
    *late_claim = lclaim > 0 || (lclaim == 0 && rule) ? 1 : 0;
}

/* cuTensorMapEncodeTiled, from the driver (looked up once; NULL where the
   driver has none) */
typedef CUresult (*tmap_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                   const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static pthread_once_t tmap_once = PTHREAD_ONCE_INIT;
static tmap_encode_fn tmap_encode;

static void tmap_find(void) { tmap_encode = (tmap_encode_fn)driver_entry("cuTensorMapEncodeTiled"); }

_Static_assert(sizeof(CUtensorMap) == sizeof(kg_attn_tmap), "kg_attn_tmap holds a CUtensorMap");

/* The tensor map of a [B, H, S, D] operand (16-bit elements, D contiguous)
   as {D, S, H, B} with boxes of 64 elements x `rows` rows, 128-byte swizzle,
   zeros outside the tensor; 0 where it cannot be encoded (the kernel then
   copies with cp.async). A size-1 dim's stride is replaced by the packed
   one (it is never stepped). */
static int tmap_of(kg_attn_tmap *m, kg_dtype dt, const kg_tensor *t, int rows)
{
    const int64_t es = 2;
    cuuint64_t dim[4] = {(cuuint64_t)t->shape[3], (cuuint64_t)t->shape[2], (cuuint64_t)t->shape[1],
                         (cuuint64_t)t->shape[0]};
    cuuint64_t st[3];
    int64_t packed = es * t->shape[3];
    for (int i = 0; i < 3; i++) {
        const int64_t x = t->shape[2 - i] == 1 ? packed : t->strides[2 - i] * es;
        if (x <= 0 || x % 16 != 0 || x >= ((int64_t)1 << 40))
            return 0;
        st[i] = (cuuint64_t)x;
        packed = x * t->shape[2 - i];
    }
    const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1}, one[4] = {1, 1, 1, 1};
    if ((uintptr_t)t->data % 16 != 0 || rows <= 0 || rows > 256)
        return 0;
    return tmap_encode((CUtensorMap *)m, dt == KG_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                       4, t->data, dim, st, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                       CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The Hopper prefill kernels' tensor maps (q with the block's query rows,
   k and v with its keys per tile); on = 0 where any of them cannot be
   encoded or the hook turned them off. */
static void tmaps_of(kg_attn_tmaps *tm, const kg_attn_entry *e, kg_dtype dt, const kg_tensor *q, const kg_tensor *k,
                     const kg_tensor *v)
{
    memset(tm, 0, sizeof *tm);
    if (__atomic_load_n(&tma_force, __ATOMIC_RELAXED) < 0)
        return;
    pthread_once(&tmap_once, tmap_find);
    tm->on = tmap_encode && tmap_of(&tm->q, dt, q, e->bm) && tmap_of(&tm->k, dt, k, e->bn) &&
             tmap_of(&tm->v, dt, v, e->bn);
}

/* The decode kernels' tensor maps: k and v only (they load q with cp.async
   copies; its map would be one more cuTensorMapEncodeTiled a call). With
   dec_raise_smem below, host time a call, µs, before / after, H200 host,
   same process, s21r1 (six decode rows, the runtime's launches): 6.96 /
   6.60, 7.25 / 6.77, 7.03 / 6.67, 7.19 / 6.86, 6.73 / 6.22, 7.35 / 7.18;
   the device time is the same. */
static void dec_tmaps_of(kg_attn_tmaps *tm, const kg_attn_entry *e, kg_dtype dt, const kg_tensor *q,
                         const kg_tensor *k, const kg_tensor *v)
{
    if (__atomic_load_n(&dec_host_force, __ATOMIC_RELAXED) < 0) {
        tmaps_of(tm, e, dt, q, k, v);
        return;
    }
    memset(tm, 0, sizeof *tm);
    if (__atomic_load_n(&tma_force, __ATOMIC_RELAXED) < 0)
        return;
    pthread_once(&tmap_once, tmap_find);
    tm->on = tmap_encode && tmap_of(&tm->k, dt, k, e->bn) && tmap_of(&tm->v, dt, v, e->bn);
}

/* The shared memory limits the decode launches have raised, per (device,
   kernel): a decode call raises a kernel's limit only above the most it has
   set on that device (cudaKernelSetAttributeForDevice at every call is host
   time on every small call). Open addressing, KG_DEC_SMEM_SLOTS entries;
   when full, the limit is raised at every call as before. */
#define KG_DEC_SMEM_SLOTS 512
static struct {
    long long key; /* (device << 32 | kernel) + 1; 0: empty */
    int bytes;
} dec_smem[KG_DEC_SMEM_SLOTS];
static pthread_mutex_t dec_smem_lock = PTHREAD_MUTEX_INITIALIZER;

static kg_status dec_raise_smem(kg_context *ctx, int kernel, int smem)
{
    if (__atomic_load_n(&dec_host_force, __ATOMIC_RELAXED) < 0) {
        /* the old path sets the limit, maybe below what the table holds:
           forget it all */
        pthread_mutex_lock(&dec_smem_lock);
        memset(dec_smem, 0, sizeof dec_smem);
        pthread_mutex_unlock(&dec_smem_lock);
        return raise_smem(ctx, kernel, smem);
    }
    const long long key = ((long long)ctx->device << 32 | (unsigned)kernel) + 1;
    int at = -1;
    pthread_mutex_lock(&dec_smem_lock);
    for (int i = 0, h = (int)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 55); i < KG_DEC_SMEM_SLOTS; i++) {
        const int x = (h + i) % KG_DEC_SMEM_SLOTS;
        if (dec_smem[x].key == key || dec_smem[x].key == 0) {
            at = x;
            break;
        }
    }
    const int have = at >= 0 && dec_smem[at].key == key ? dec_smem[at].bytes : -1;
    pthread_mutex_unlock(&dec_smem_lock);
    if (smem <= have)
        return KG_OK;
    const kg_status st = raise_smem(ctx, kernel, smem);
    if (st != KG_OK || at < 0)
        return st;
    pthread_mutex_lock(&dec_smem_lock);
    if (dec_smem[at].key == 0 || dec_smem[at].key == key) {
        dec_smem[at].key = key;
        if (dec_smem[at].bytes < smem)
            dec_smem[at].bytes = smem;
    }
    pthread_mutex_unlock(&dec_smem_lock);
    return KG_OK;
}

/* The pair launch (the runtime's where kg_attn_dec_pair_rule takes it, or
   forced by kg_test_attn_dec_pair) wants two blocks of 84 KB
   (D 128, 2 stages) or 108.5 KB (D 64) a multiprocessor; whether they both
   become resident depends on the L1 / shared-memory split the driver picks
   for the launch. So a pair launch first sets its kernel's preferred
   carveout to the most shared memory (cudaSharedmemCarveoutMaxShared), and
   a later launch of that kernel without pair puts the default back: the
   kernels set to the most, per (device, kernel), are remembered here. A
   process in which no launch took pair makes no call. Open addressing, KG_DEC_CARVE_SLOTS entries; when full, a pair
   launch sets the preference at every call and a non-pair launch of a
   kernel it could not remember keeps it. */
#define KG_DEC_CARVE_SLOTS 256
static long long dec_carve[KG_DEC_CARVE_SLOTS]; /* (device << 32 | kernel) + 1; 0: empty; -1: removed */
static pthread_mutex_t dec_carve_lock = PTHREAD_MUTEX_INITIALIZER;

static kg_status dec_carveout(kg_context *ctx, int kernel, int pair)
{
    const long long key = ((long long)ctx->device << 32 | (unsigned)kernel) + 1;
    int at = -1, free_at = -1;
    pthread_mutex_lock(&dec_carve_lock);
    for (int i = 0, h = (int)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 56); i < KG_DEC_CARVE_SLOTS; i++) {
        const int x = (h + i) % KG_DEC_CARVE_SLOTS;
        if (dec_carve[x] == key) {
            at = x;
            break;
        }
        if (dec_carve[x] <= 0 && free_at < 0)
            free_at = x;
        if (dec_carve[x] == 0)
            break;
    }
    pthread_mutex_unlock(&dec_carve_lock);
    if (pair == (at >= 0))
        return KG_OK; /* already the most (pair), or never set (not pair) */
    cudaKernel_t kern;
    kg_status st = kg_kernel(ctx, kernel, &kern);
    if (st != KG_OK)
        return st;
    const cudaError_t err = cudaKernelSetAttributeForDevice(
        kern, cudaFuncAttributePreferredSharedMemoryCarveout,
        pair ? (int)cudaSharedmemCarveoutMaxShared : (int)cudaSharedmemCarveoutDefault, ctx->device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return kg_cuda_fail(ctx, err, "setting the decode kernel's shared memory carveout");
    }
    pthread_mutex_lock(&dec_carve_lock);
    if (pair && free_at >= 0 && dec_carve[free_at] <= 0)
        dec_carve[free_at] = key;
    else if (!pair && dec_carve[at] == key)
        dec_carve[at] = -1;
    pthread_mutex_unlock(&dec_carve_lock);
    return KG_OK;
}

/* Bytes of split partials one decode launch may use after the counters. */
#define KG_ATTN_PART_BYTES ((int64_t)256 << 20)

/* The short-query path: packed rows of each KV head, keys split across
   blocks (kg_attn_plan_split); where there is more than one split, the
   combine kernel merges them, or (forced by a test) the last block of each
   row tile (a counter per row tile in the scratch's counters, so at most
   KG_SCRATCH_COUNTER_BYTES / 4 row tiles split). */
static kg_status launch_decode(kg_context *ctx, kg_dtype dt, kg_attn_variant variant, const kg_attn_entry *e,
                               kg_attn_params *p, kg_attn_tmaps *tm, int slot, int64_t B, int64_t Hkv, int64_t D)
{
    const int64_t R = e->bm, rows = (int64_t)p->group * p->sq, nrt = (rows + R - 1) / R;
    const int64_t blocks = B * Hkv * nrt;
    const int64_t row_bytes = R * (D + 2) * 4; /* partial bytes of a row tile and split */
    int64_t max_splits = blocks > KG_ATTN_PART_BYTES / row_bytes ? 1 : KG_ATTN_PART_BYTES / (blocks * row_bytes);
    /* the merge counts finished splits in one int per row tile */
    if (blocks > (int64_t)(KG_SCRATCH_COUNTER_BYTES / sizeof(int)))
        max_splits = 1;
    if (max_splits > INT32_MAX / nrt)
        max_splits = INT32_MAX / nrt;
    if (max_splits < 1)
        max_splits = 1;
    int per_sm = (int)((228 << 10) / (e->smem + 1024));
    per_sm = per_sm < 1 ? 1 : per_sm > 8 ? 8 : per_sm;
    /* D 64, 128 and 256: splits for one block per multiprocessor, not as
       many as fit (H200, session 7 r1 + r3, us, the planner's count for
       every resident block / half of it: B 1 Hkv 8 Sk 32k D 128 42.5 / 40.1,
       B 2 72.9 / 71.2, B 16 Sk 4k 72.4 / 69.7 (1 split), B 8 Hq 8 Hkv 1 Sk
       14.8k 25.4 / 22.6, B 16 Hq 4 Hkv 1 D 64 18.3 / 17.2, B 64 Hq 8 Hkv 1
       104.8 / 102.8, level on 6 more rows; the count was already one per
       multiprocessor at D 256 and where the 16-keys-per-row minimum binds
       (MQA's 32-row tiles). D 96 measured 58.2 / 58.8 and D 32 (3 blocks
       per multiprocessor) 26.0 / 27.0: they keep every resident block.) */
    if (D == 64 || D == 128 || D == 256)
        per_sm = 1;
    /* pair (session 31's launch, the default where session 33's rule takes
       it, round s34r1): two 64-row blocks a multiprocessor, with the stages
       that let two fit (kg_attn_dec_pair_stages); taken only where the grid
       it plans is larger than the multiprocessors (else it plans the same
       splits and the one-a-multiprocessor launch below stands) and, unless
       kg_test_attn_dec_pair forces it, where kg_attn_dec_pair_rule says so */
    const int pmode = kgi_attn_dec_pair_mode();
    const int pair_st = pmode > 0 && variant == KG_ATTN_V_DECODE4 &&
                                (D == 64 || D == 128) && tm->on && ctx->cc_major == 9 && ctx->cc_minor == 0
                            ? kg_attn_dec_pair_stages(R, D, kg_attn_dec_bn[slot], KG_DEC_MAX_STAGES)
                            : 0;
    /* a split's partials (valid rows x D floats) at most 1/4 of its keys' K
       and V (KG_ATTN_SPLIT_PER_ROW x valid rows keys; 16 until session 20:
       H200, B 8 MQA (32 rows), Sk 8192, two blocks a multiprocessor then:
       16 splits 23.6 us, the one-wave 32 splits 33.2; at one block a
       multiprocessor that row takes 16 splits either way) */
    const int64_t vr = rows < R ? rows : R;
    const int64_t slots = (int64_t)ctx->sm_count * (pair_st > 0 ? 2 : per_sm);
    const int ms = (int)(max_splits > KG_ATTN_MAX_SPLITS ? KG_ATTN_MAX_SPLITS : max_splits);
    const int forced = (int)ctx->test_force[KGI_TEST_ATTN_SPLITS];
    /* D 32 (K and V on cp.async copies, a few KB in flight a block, three
       blocks per multiprocessor) gets the splits that fill its waves
       (kg_attn_plan_split's fill) */
    const int fill = D < 64 && per_sm > 1 && __atomic_load_n(&dec_fill_force, __ATOMIC_RELAXED) >= 0
                         ? KG_ATTN_FILL_PCT
                         : 0;
    const int cf = __atomic_load_n(&dec_chunk_force, __ATOMIC_RELAXED);
    const int64_t per_row = cf > 0 ? cf : cf < 0 ? 0 : KG_ATTN_SPLIT_PER_ROW;
    kg_attn_split sp = kg_attn_plan_split(blocks, p->sk, kg_attn_dec_bn[slot], slots, ms, per_row * vr, fill, forced);
    int pair = pair_st > 0 && blocks * sp.splits > ctx->sm_count;
    if (pair_st > 0) {
        const kg_attn_split sd = kg_attn_plan_split(blocks, p->sk, kg_attn_dec_bn[slot], (int64_t)ctx->sm_count * per_sm,
                                                    ms, per_row * vr, fill, forced);
        /* session 33's rule (mode 2, the runtime's choice) gets the
           residency of the launch without pair: one block a multiprocessor
           where the spread rule below pads its one wave, else as many as
           its shared memory lets (D 64: two) */
        if (pair && pmode == 2) {
            const int64_t nd = blocks * sd.splits;
            int dres = (int)((228 << 10) / (e->smem + 1024));
            if (nd <= ctx->sm_count || dres < 1)
                dres = 1;
            pair = kg_attn_dec_pair_rule(nrt, blocks, sd.splits, sd.chunk, sp.splits, sp.chunk, kg_attn_dec_bn[slot],
                                         ctx->sm_count, dres > 2 ? 2 : dres);
        }
        if (!pair)
            sp = sd;
    }
    __atomic_store_n(&dec_fill_last, fill, __ATOMIC_RELAXED);
    __atomic_store_n(&dec_pair_last, pair, __ATOMIC_RELAXED);
    p->splits = sp.splits;
    p->chunk = sp.chunk;
    p->rows_tile = (int32_t)R;
    p->trace =
        ctx->test_force[KGI_TEST_ATTN_TRACE] > 0 ? (unsigned long long *)ctx->test_force[KGI_TEST_ATTN_TRACE] : NULL;
    /* the merge: the combine kernel's grid where the fused one (the last
       block of each row tile) would read more than KG_ATTN_FUSED_MERGE_BYTES
       of partials (splits x valid rows x D floats): now always; a test may
       force either */
    const int comb = kg_attn_combine[dt][slot];
    int separate = comb > 0 && sp.splits * vr * D * 4 > KG_ATTN_FUSED_MERGE_BYTES;
    const intptr_t fm = ctx->test_force[KGI_TEST_ATTN_MERGE];
    if (comb > 0 && (fm == 1 || fm == 2))
        separate = fm == 2;
    kg_status st;
    int lanes = kg_attn_merge_lanes(sp.splits); /* (the fused merge's, attention_decode.cuh's dec_lanes) */
    /* the tail merge where kg_attn_dec_tail_rule says so (a test may force
       it, 3, or the others, 1 and 2): the last blocks of each row tile
       merge it (kg_attn_dec_tail_mergers; a counter a row tile, as
       max_splits allows) */
    /* K and V of 2-byte elements; B * Hkv * Sk < 2^63 (B, Hkv < 2^16, Sk <
       2^31), so only the last factors can overflow: saturate past the rule's
       bound instead (a stride-0 K can make the product huge) */
    const int64_t kv_keys = B * Hkv * (int64_t)p->sk;
    const int64_t kv_bytes = kv_keys > INT64_MAX / (4 * D) ? INT64_MAX : kv_keys * 4 * D;
    const int tail = (fm == 3 || (fm != 1 && fm != 2 && kg_attn_dec_tail_rule(blocks * sp.splits, ctx->sm_count,
                                                                              kv_bytes, sp.splits, vr))) &&
                             sp.splits > 1
                         ? kg_attn_dec_tail_mergers(blocks, sp.splits, vr * (D / 4), lanes, ctx->sm_count)
                         : 0;
    if (tail > 0)
        separate = 0;
    if (sp.splits > 1) {
        void *base;
        st = kg_scratch(ctx, KG_SCRATCH_COUNTER_BYTES + (size_t)(blocks * row_bytes * sp.splits), &base);
        if (st != KG_OK)
            return st;
        p->counters = separate ? NULL : (int *)base;
        p->part = (float *)((char *)base + KG_SCRATCH_COUNTER_BYTES);
    }
    /* A grid of at most one block per multiprocessor whose blocks would fit
       two to a multiprocessor (228 KB of shared memory, compute capability
       9.0) asks for more than half of it, so that the hardware scheduler
       cannot put two blocks on one multiprocessor and leave another idle. */
    const int64_t nblocks = blocks * sp.splits;
    /* (the candidate's blocks: its stages' bytes, below the kernel's own at
       D 128, so that two fit; never padded) */
    int smem = pair ? (int)kg_attn_dec4_smem(R, D, kg_attn_dec_bn[slot], pair_st) : e->smem;
    const int sf = __atomic_load_n(&dec_spread_force, __ATOMIC_RELAXED);
    const int spread =
        !pair && ctx->cc_major == 9 && ctx->cc_minor == 0 && (sf > 0 || (sf == 0 && nblocks <= ctx->sm_count));
    const int pad = spread && (int64_t)(smem + 1024) * 2 <= (228 << 10);
    if (pad)
        smem = (114 << 10) + 1;
    __atomic_store_n(&dec_spread_last, pad, __ATOMIC_RELAXED);
    /* the stages on bulk tensor copies: Q, 1 KB of alignment and each
       stage's K and V tiles in whole 64-element panels, within the 227 KB a
       block may have (attention_decode.cuh). 32-row tiles (MQA-like groups)
       spread one block a multiprocessor take 6 (the most that fit at D 64
       to 128) instead of the kernel's 3: their blocks compute long on each
       tile, and more tiles in flight keep the stream going (H200, same
       process, 3 / 6 stages, µs: s17r1 MQA B 8 Hq 32 Sk 8192 D 128 16.44 /
       16.14, MQA B 1 Sk 32768 15.78 / 15.62, B 8 Hq 32 Hkv 1 Sk 15997 D 64
       15.61 / 15.23; s17r2 16.08 / 15.59, 15.57 / 15.35, 15.54 / 15.17;
       s17r3, the rule in place, MQA B8 16.56 / 16.41, B8 Hq32 Hkv1 D64
       16.08 / 15.80; 16-row tiles gained on some rows and lost up to 3.7%
       on others, the big rows 1.6-2.2%). The 16-row tiles of 17-32 rows
       (kg_attn_dec_tile_rows) take 6 as well (s20r1, same process, 3 / 6
       stages, µs: MQA B 1 Sk 32768 14.16 / 13.82, MQA B 4 Sk 8192 13.24 /
       12.81, B 2 Hq 32 Hkv 1 Sk 20000 D 64 10.77 / 9.94, MQA B 2 Sk 8192
       10.63 / 10.65, B 4 Hq 64 Hkv 2 Sk 6000 15.83 / 15.52). A test may
       ask for any count. */
    const int sforce = __atomic_load_n(&dec_stages_force, __ATOMIC_RELAXED);
    int stages = sforce != 0 ? sforce : pair ? pair_st : spread && (R == 32 || (R == 16 && rows > 16)) ? 6 : 0;
    if (!tm->on || stages > KG_DEC_MAX_STAGES || stages < 2)
        stages = 0;
    if (stages > 0) {
        const int64_t bn = kg_attn_dec_bn[slot], dp = (D + 63) / 64 * 64;
        const int64_t need = R * (D + 8) * 2 + 1024 + stages * 2 * bn * dp * 2;
        if (need > (227 << 10) - 256)
            stages = 0;
        else if (need > smem)
            smem = (int)need;
    }
    p->stages = (int16_t)stages;
    __atomic_store_n(&dec_stages_last, stages, __ATOMIC_RELAXED);
    /* the decode kernel lets the next grid (the combine kernel, or the
       next call) launch only once each of its blocks has passed its wait
       for the previous grid, not at its start (H200, same process, µs,
       start / after the wait, s17r1, r2, r3: MQA B8 Sk8192 D128 16.44 /
       16.28, 16.08 / 16.03, 16.41 / 15.85; MQA B1 Sk32768 15.78 / 15.77,
       15.57 / 15.56, 15.65 / 15.04; B16 Hq4 Hkv1 Sk11198 D64 15.03 / 14.81,
       14.80 / 14.50, 14.92 / 14.56; f16 B1 Hq64 Hkv4 Sk20584 16.50 / 16.15,
       16.26 / 16.03, 16.29 / 16.36; the big rows level within 0.3%; slower
       on one row each time, f16 B8 Hq8 Hkv1 Sk14753 21.81 / 22.03, 21.59 /
       21.81, 21.37 / 21.81) */
    const int lf = __atomic_load_n(&dec_late_force, __ATOMIC_RELAXED);
    const int late = lf >= 0;
    const int kf = __atomic_load_n(&dec_kflags_force, __ATOMIC_RELAXED);
    /* the combine kernel's trigger before its wait where the decode grid
       leaves at least half the multiprocessors idle (kg_attn_dec_comb_early) */
    const unsigned kbits =
        kf > 0 ? (unsigned)kf & KG_DEC_COMB_EARLY
        : kf == 0 && sp.splits > 1 && separate && kg_attn_dec_comb_early(nblocks, ctx->sm_count) ? KG_DEC_COMB_EARLY
                                                                                                 : 0u;
    __atomic_store_n(&dec_kflags_last, (int)kbits, __ATOMIC_RELAXED);
    p->dflags = (uint16_t)((late ? KG_DEC_LATE_PDL : 0) | kbits | (tail > 0 ? KG_DEC_TAIL | (unsigned)tail << 8 : 0u));
    __atomic_store_n(&dec_late_last, late, __ATOMIC_RELAXED);
    st = dec_raise_smem(ctx, e->kernel, smem);
    if (st == KG_OK)
        st = dec_carveout(ctx, e->kernel, pair);
    if (st != KG_OK)
        return st;
    void *argv[2] = {p, tm}; /* (the combine kernel takes p alone) */
    const dim3 grid = {(unsigned)(nrt * sp.splits), (unsigned)Hkv, (unsigned)B};
    st = launch_pdl(ctx, e->kernel, grid, (dim3){(unsigned)e->threads, 1, 1}, argv, (size_t)smem);
    if (st != KG_OK)
        return st;
    if (sp.splits > 1 && separate) {
        /* blocks of 128 / lanes groups of `lanes` threads, a group per
           (row, float4 column); a test may force the lanes */
        const int lf = __atomic_load_n(&dec_lanes_force, __ATOMIC_RELAXED);
        lanes = lf > 0 && lf <= 32 && (lf & (lf - 1)) == 0 ? lf : kg_attn_merge_lanes(sp.splits);
        const int64_t groups = rows * (D / 4); /* per (KV head, batch) */
        const int64_t per = 128 / lanes;
        st = launch_pdl(ctx, comb - 1, (dim3){(unsigned)((groups + per - 1) / per), (unsigned)Hkv, (unsigned)B},
                        (dim3){(unsigned)lanes, (unsigned)per, 1}, argv, 0);
        if (st != KG_OK)
            return st;
    }
    ctx->test_last[KGI_TEST_ATTN_VARIANT] = variant;
    ctx->test_last[KGI_TEST_ATTN_SPLITS] = sp.splits;
    ctx->test_last[KGI_TEST_ATTN_MERGE] = sp.splits > 1 ? tail > 0 ? 3 : 1 + separate : 0;
    if (sp.splits > 1)
        __atomic_store_n(&dec_lanes_last, lanes, __ATOMIC_RELAXED);
    __atomic_store_n(&tma_last, tm->on, __ATOMIC_RELAXED);
    return kg_ok(ctx);
}

static int dim_slot(int64_t D)
{
    for (int i = 0; i < KG_ATTN_DIM_COUNT; i++)
        if (kg_attn_dims[i] == D)
            return i;
    return -1;
}

kg_status kg_attention(kg_context *ctx, const kg_tensor *out, const kg_tensor *lse, const kg_tensor *q,
                       const kg_tensor *k, const kg_tensor *v, const kg_tensor *mask, const kg_attention_opts *opts)
{
    if (!ctx)
        return KG_ERR_INVALID_ARGUMENT;
    const args a = {out, lse, q, k, v, mask};
    kg_status st = kgi_check_tensor(ctx, out, "out");
    if (st == KG_OK)
        st = kgi_check_tensor(ctx, q, "q");
    if (st == KG_OK)
        st = kgi_check_tensor(ctx, k, "k");
    if (st == KG_OK)
        st = kgi_check_tensor(ctx, v, "v");
    if (st == KG_OK && lse)
        st = kgi_check_tensor(ctx, lse, "lse");
    if (st == KG_OK && mask)
        st = kgi_check_tensor(ctx, mask, "mask");
    if (st == KG_OK)
        st = check_dtypes(ctx, &a);
    if (st == KG_OK)
        st = check_shapes(ctx, &a);
    if (st != KG_OK)
        return st;
    const int64_t B = q->shape[0], Hq = q->shape[1], Sq = q->shape[2], D = q->shape[3];
    const int64_t Hkv = k->shape[1], Sk = k->shape[2];
    const int slot = dim_slot(D);
    /* f64 runs the f64 kernels (any layout); a head dim that is not
       generated, or an operand the kernels cannot load as it is (head dim
       not contiguous, data or B/H/S strides not 16-byte aligned), goes
       through packed, zero-padded copies (attention_pack.c, issue 16) */
    const int64_t Dp = kgi_attn_padded_dim(D);
    if (Dp < 0)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention: head dim %lld is larger than %lld (generated: " KG_ATTN_DIMS_TEXT
                       "; a smaller one is zero-padded to the next)",
                       (long long)D, (long long)kg_attn_dims[KG_ATTN_DIM_COUNT - 1]);
    if (D == 0 && !(opts && opts->scale != 0.f))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention: head dim 0 makes the default scale 1/sqrt(D) infinite (pass a "
                       "nonzero opts->scale)");
    const double scale_d = opts && opts->scale != 0.f ? (double)opts->scale : 1.0 / sqrt((double)D);
    const float scale = (float)scale_d;
    if (!isfinite(scale))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT, "invalid argument: attention: scale %g is not finite",
                       (double)scale);
    /* the kernels use scale * log2(e): it must be finite too (issue 13) */
    if (!isfinite(scale * 1.4426950408889634f))
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention: scale %g overflows float once multiplied by log2(e)",
                       (double)scale);
    if (Sq > INT32_MAX || Sk > INT32_MAX || B > 65535 || Hq > 65535)
        return kg_fail(ctx, KG_ERR_INVALID_ARGUMENT,
                       "invalid argument: attention: sizes out of range (Sq, Sk < 2^31; B, Hq <= 65535), got B=%lld "
                       "Hq=%lld Sq=%lld Sk=%lld",
                       (long long)B, (long long)Hq, (long long)Sq, (long long)Sk);
    const kg_tensor *lay[4] = {q, k, v, out};
    int packed = slot < 0;
    for (int i = 0; i < 4; i++)
        packed |= !kgi_attn_direct(lay[i]);
    /* outputs need one location per element (issue 13) */
    st = kgi_check_no_self_overlap(ctx, out, "out");
    if (st == KG_OK && lse)
        st = kgi_check_no_self_overlap(ctx, lse, "lse");
    if (st == KG_OK)
        st = check_overlap(ctx, &a);
    if (st == KG_OK)
        st = kg_ready(ctx);
    if (st != KG_OK)
        return st;
    if (B * Hq * Sq == 0)
        return kg_ok(ctx);
    if (q->dtype == KG_F64)
        return kgi_attention_f64(ctx, out, lse, q, k, v, mask, opts && opts->causal, scale_d);
    if (packed)
        return kgi_attention_packed(ctx, out, lse, q, k, v, mask, opts && opts->causal, scale, Dp);

    const kg_attn_kind kind = mask ? KG_ATTN_MASK : (opts && opts->causal) ? KG_ATTN_CAUSAL : KG_ATTN_NONE;
    const kg_attn_variant variant = choose_variant(ctx, q->dtype, slot, kind, B * Hq, Sq, Sk, Hq / Hkv);
    const kg_attn_entry *e = &kg_attn_table[variant][q->dtype][slot][kind];

    kg_attn_params p;
    memset(&p, 0, sizeof p);
    p.q = q->data;
    p.k = k->data;
    p.v = v->data;
    p.out = out->data;
    p.q_sb = q->strides[0], p.q_sh = q->strides[1], p.q_ss = q->strides[2];
    p.k_sb = k->strides[0], p.k_sh = k->strides[1], p.k_ss = k->strides[2];
    p.v_sb = v->strides[0], p.v_sh = v->strides[1], p.v_ss = v->strides[2];
    p.o_sb = out->strides[0], p.o_sh = out->strides[1], p.o_ss = out->strides[2];
    if (lse) {
        p.lse = (float *)lse->data;
        p.l_sb = lse->strides[0], p.l_sh = lse->strides[1], p.l_ss = lse->strides[2];
    }
    if (mask) {
        /* right-aligned broadcast: missing and size-1 dims read stride 0 */
        int64_t ms[4] = {0, 0, 0, 0};
        for (int d = 0; d < mask->ndim; d++) {
            const int to = 4 - mask->ndim + d;
            ms[to] = mask->shape[d] == 1 ? 0 : mask->strides[d];
        }
        p.mask = (const float *)mask->data;
        p.m_sb = ms[0], p.m_sh = ms[1], p.m_sq = ms[2], p.m_sk = ms[3];
    }
    p.sq = (int32_t)Sq;
    p.sk = (int32_t)Sk;
    p.group = (int32_t)(Hq / Hkv);
    p.causal = opts && opts->causal;
    p.scale_log2 = scale * 1.4426950408889634f;

    /* the Hopper and decode kernels' second argument: the tensor maps
       (decode: head dims from 64 (D 96 in two panels), compute capability
       9.0; see attention_decode.cuh) */
    kg_attn_tmaps tm;
    tm.on = 0;
    if (is_decode(variant) && ctx->cc_major == 9 && D >= 64)
        dec_tmaps_of(&tm, e, q->dtype, q, k, v);
    else if (kg_attn_variant_sm90a[variant])
        tmaps_of(&tm, e, q->dtype, q, k, v);
    if (is_decode(variant))
        return launch_decode(ctx, q->dtype, variant, e, &p, &tm, slot, B, Hkv, D);

    /* blocks need more than the default 48 KB of shared memory */
    st = raise_smem(ctx, e->kernel, e->smem);
    if (st != KG_OK)
        return st;
    /* causal on the Hopper variants at D >= 128: grid (query blocks x Hq, 1,
       B), which the kernel reads as sections of heads, heaviest blocks first
       (attention_sm90.cuh). H200, bf16, us, heaviest first / plain order:
       D 256 S 4k causal 620 / 705, GQA D 128 S 4k 1321 / 1367, D 128 S 4k
       1317 / 1344, S 1k 442 / 437; at D 64 plain is level or better (S 1k
       311 / 302, S 4k 865 / 874, S 16k 3078 / 3046). A test may force either. */
    const int64_t nmb = (Sq + e->bm - 1) / e->bm;
    const int hopper =
        variant == KG_ATTN_V_HOPPER || variant == KG_ATTN_V_HOPPER_LONG || variant == KG_ATTN_V_HOPPER_PP;
    const intptr_t fo = ctx->test_force[KGI_TEST_ATTN_ORDER];
    const int persist = is_persist(variant);
    /* persistent: one block per multiprocessor (a block's shared memory
       fills one), each taking work tiles of p.units (below); causal tiles
       always heaviest first (attention_sm90.cuh) */
    const int order =
        persist ? p.causal
                : hopper && p.causal && nmb * Hq <= INT32_MAX && (fo >= 0 ? fo > 0 : kg_attn_dims[slot] >= 128);
    if (persist) {
        p.units = (int32_t)(nmb * Hq * B); /* choose_variant checked the range */
        p.hkv = (int32_t)Hq;
        /* the order across batches and the late claim (kg_attn_persist_sched;
           units < 2^31, so B x Hq fits) */
        kg_attn_persist_sched(variant, p.causal, B * Hq, __atomic_load_n(&xorder_force, __ATOMIC_RELAXED),
                              __atomic_load_n(&lclaim_force, __ATOMIC_RELAXED), &KG_ATTN_XORDER_PAIRS(p),
                              &KG_ATTN_LATE_CLAIM(p));
        /* The blocks take their tiles from a queue (two counters of the
           stream's scratch), each the next one (causal: the next heaviest)
           as it starts one (KG_ATTN_LATE_CLAIM 1: once the one before has its loads
           issued), rather than every gridDim.x-th: they end level whatever
           the tiles' costs. H200, session 12 r1a, us, same
           process, queue / in turn: bf16 D 64 S 1k causal 245.1 / 246.5
           (f16 245.0 / 247.2), S 4k causal (192-key tiles) 670.8 / 690.2,
           D 128 S 1k causal 309.4 / 335.9 (pp 312.8 / 335.6); not causal,
           D 64 S 1k 359.8 / 363.6, 192-key tiles 371.0 / 378.4. Without
           the scratch (first use inside a graph capture) they take them in
           turn. */
        const int qf = __atomic_load_n(&queue_force, __ATOMIC_RELAXED);
        if (qf >= 0) {
            void *base;
            if (kg_scratch(ctx, KG_SCRATCH_COUNTER_BYTES, &base) == KG_OK)
                p.queue = (int *)base;
            else
                kg_ok(ctx); /* (no error left behind: the launch goes on without the queue) */
        }
    }
    const int64_t pgrid = persist ? (p.units < ctx->sm_count ? p.units : ctx->sm_count) : 0;
    const dim3 grid = persist ? (dim3){(unsigned)pgrid, 1, 1}
                      : order ? (dim3){(unsigned)(nmb * Hq), 1, (unsigned)B}
                              : (dim3){(unsigned)nmb, (unsigned)Hq, (unsigned)B};
    const dim3 block = {(unsigned)e->threads, 1, 1};
    /* the per-block (and persistent: per-tile) trace, a test hook; the
       Hopper kernels write it (attention_sm90.cuh) */
    if (kg_attn_variant_sm90a[variant] && ctx->test_force[KGI_TEST_ATTN_TRACE] > 0)
        p.trace = (unsigned long long *)ctx->test_force[KGI_TEST_ATTN_TRACE];
    /* the "ts" variant (attention_sm90.cuh TS): the output's tensor map
       (boxes of a warpgroup's 64 rows) and whether it is set, two more
       arguments; not set (the kernel's ordinary stores) where the loads'
       maps are not or it cannot be encoded */
    kg_attn_tmap tmo;
    int tmo_on = 0;
    memset(&tmo, 0, sizeof tmo);
    if (variant == KG_ATTN_V_HOPPER_PERSIST_TS)
        tmo_on = tm.on && tmap_of(&tmo, q->dtype, out, 64);
    void *argv[4] = {&p, &tm, &tmo, &tmo_on};
    st = kg_launch(ctx, e->kernel, grid, block, argv, (size_t)e->smem);
    if (st == KG_OK) {
        ctx->test_last[KGI_TEST_ATTN_VARIANT] = variant;
        ctx->test_last[KGI_TEST_ATTN_ORDER] = order;
        __atomic_store_n(&tma_last, tm.on, __ATOMIC_RELAXED);
        __atomic_store_n(&queue_last, p.queue != NULL, __ATOMIC_RELAXED);
        __atomic_store_n(&xorder_last, persist && KG_ATTN_XORDER_PAIRS(p) > 0, __ATOMIC_RELAXED);
        __atomic_store_n(&lclaim_last, persist && KG_ATTN_LATE_CLAIM(p) > 0, __ATOMIC_RELAXED);
        __atomic_store_n(&tmo_last, tmo_on, __ATOMIC_RELAXED);
    }
    return st == KG_OK ? kg_ok(ctx) : st;
}

void kg_test_force_attn_variant(kg_context *ctx, int variant)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_VARIANT] = variant;
}

int kg_test_last_attn_variant(const kg_context *ctx) { return ctx ? (int)ctx->test_last[KGI_TEST_ATTN_VARIANT] : -1; }

void kg_test_force_attn_splits(kg_context *ctx, int splits)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_SPLITS] = splits;
}

int kg_test_last_attn_splits(const kg_context *ctx)
{
    return ctx && ctx->test_last[KGI_TEST_ATTN_SPLITS] > 0 ? (int)ctx->test_last[KGI_TEST_ATTN_SPLITS] : 0;
}

/* mode: 1 the fused merge, 2 the combine kernel, 3 the tail merge
   (KG_DEC_TAIL), 0 the runtime's choice */
void kg_test_force_attn_combine(kg_context *ctx, int mode)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_MERGE] = mode;
}

int kg_test_last_attn_combine(const kg_context *ctx)
{
    return ctx && ctx->test_last[KGI_TEST_ATTN_MERGE] > 0 ? (int)ctx->test_last[KGI_TEST_ATTN_MERGE] : 0;
}

void kg_test_attn_pdl(kg_context *ctx, int on)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_PDL] = on ? 1 : 0;
}

void kg_test_attn_trace(kg_context *ctx, unsigned long long *trace)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_TRACE] = trace ? (intptr_t)trace : -1;
}

void kg_test_attn_order(kg_context *ctx, int on)
{
    if (ctx)
        ctx->test_force[KGI_TEST_ATTN_ORDER] = on < 0 ? -1 : on > 0;
}

int kg_test_last_attn_order(const kg_context *ctx) { return ctx && ctx->test_last[KGI_TEST_ATTN_ORDER] > 0 ? 1 : 0; }
