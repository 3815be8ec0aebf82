-- attention_bwd.lua - the flash attention backward family, from
-- templates/attention_bwd.cu + templates/attention_bwd.cuh; per dtype the
-- modules
--   attnb_<dtype>        per head dim the delta pass (pre) and the dQ sum
--                        (dqsum): the small kernels around the main one;
--   attnb_<dtype>_d<D>   head dim D's kv kernel (dK, dV), q kernel (dQ) and
--                        fused kvq kernels, per mask kind;
--   attnb90_<dtype>      the Hopper kvq kernels (sm_90a; f16 / bf16);
-- so that the first call loads only what it runs (issue 11: a module's load
-- time grows with its code; one module per dtype was 0.78 MiB, 58 kernels,
-- 9.6-10.8 ms to load on the H200, 2026-12-01 run r1). And kg_attnb_table.c
-- / .h: [dtype][head dim slot] -> the launches (kernel index, threads, rows
-- per block, dynamic shared memory) that runtime/attention_bwd.c issues.
-- Head dims and mask kinds are the forward's (gen/attention.lua).
local M = {}

local fwd = require("attention")
M.dims = fwd.dims
M.kinds = fwd.kinds
local kind_enum = { none = "KG_ATTN_NONE", causal = "KG_ATTN_CAUSAL", mask = "KG_ATTN_MASK" }

-- Tensor cores. kv: nkw warps of 16 keys (bn = 16 nkw keys per block), bm
-- queries per tile; split: two warps per 16 keys (dV and dK apart), for
-- D = 256 where both accumulators would not fit one thread's registers.
-- q: nw warps of 16 queries, bn keys per tile.
M.tc_kv = {
  [32] = { nkw = 4, bm = 64 },
  [64] = { nkw = 4, bm = 64 },
  [96] = { nkw = 4, bm = 32 },
  [128] = { nkw = 4, bm = 32 },
  [256] = { nkw = 4, bm = 32, split = true },
}
M.tc_q = {
  [32] = { nw = 4, bn = 64 },
  [64] = { nw = 4, bn = 64 },
  [96] = { nw = 4, bn = 32 },
  [128] = { nw = 4, bn = 32 },
  [256] = { nw = 4, bn = 32 },
}
-- The fused path (f16 / bf16; kvq kernel + dqsum): kv's tiles plus dQ
-- partials. Several tunings per head dim; the first is the default, the
-- others are picked with KG_ATTNB_TUNE=i (runtime/attention_bwd.c) so that
-- one GPU run compares them. A head dim without tunings takes the separate
-- dq pass (kv + q).
-- (Until session 24 D 64 and 128 also had a second tuning, 64 keys a block
-- (nkw 4; 102400 / 110080 bytes): the 64-key kvq of window 1 below, never
-- the default; as the first to fit it would have run only where a block
-- may take at least that but less than the default's 130048 / 150016
-- bytes, a limit of no device this bundle runs on (8.0 / 8.7: 166912, 8.6
-- / 8.9: 101376, 9.0: 232448), so it was removed.)
M.tc_kvq = {
  [32] = { { nkw = 8, bm = 64 } },
  [64] = { { nkw = 8, bm = 64 } },
  [96] = { { nkw = 8, bm = 64 } },
  [128] = { { nkw = 8, bm = 32 } },
  -- none: D = 256 fits only 64 keys a block (4 key warps + 4 dV warps), and
  -- window 1 (H200, 2026-12-01) had the 64-key kvq 0.78-0.81x of the
  -- separate dq pass at D 64 and 128 (the partials' traffic per product
  -- doubles), the 128-key one 1.07x
  [256] = {},
}
M.max_tunes = 12
-- f32's fused path: the kv kernel's tiles (FFMA) plus the dQ partials. lay:
-- the threads' layout (f32_txy in templates/attention_bwd.cuh; 1: warps of
-- 8 x 4 threads, dQ rows adjacent per thread). H200 (2026-12-01, runs r2 and
-- r5, kgen TFLOP/s, non-causal): D64 S1k/4k/16k 24.6/25.1/25.1 with 64 keys
-- a block and 16x2-thread warps (lay 0), the same with 8x4 ones, 30.1/30.9/
-- 25.0 with 8x4 at 2 blocks/SM (S16k: 128 blocks, half the SMs), 30.3/31.0/
-- 31.1 with 128 keys a block and 8x4; D128 S1k/4k 30.3/31.0 -> 30.9/31.6 with
-- 8x4 warps, 29.5/30.1 with one P^T/dS^T buffer and 64x32 tiles at 2
-- blocks/SM. D 32, 96 and 256 keep lay 0 (not measured). split: the
-- split-role kernel (attnb_kvq_f32s: half the block S^T and dV, half dP^T
-- and dK, twice the tile a thread per product), the D128 default from run
-- r3 of 2026-12-02 (H200, same run: S1k 31.9 / 28.4, S4k 32.7 / 31.6, S16k
-- causal 32.3 against 30.7 / 27.4, 31.4 / 30.3, 30.9 TFLOP/s for lay 1,
-- +3.5-4.5%); at D64 (128 keys, 255 registers, up to 24 B spilled) it lost
-- 4-6% and was dropped. Run r1: 512-thread blocks (a 16 x 32 thread grid at
-- 128 registers, 16 warps an SM) ran 24-25% slower at D128 and 8-9% at D64:
-- the kernel is not bound by occupancy. (By shared-memory wavefronts a
-- warp's FFMA loops are not bound either: the D128 split kernel's dots take
-- 12 wavefronts per 128 FFMAs, its dV / dK 24 per 256, dQ 3 per 32.)
-- D64's second tuning (64 keys x 64-query tiles, 107008 bytes; r2 of
-- 2026-12-01 measured it at 30.1 / 26.8 TFLOP/s at S1k against the default's
-- 30.3 / 25.7), the last D128 one (64 x 32, 122112 bytes) and D256's second
-- (32 x 32, 142592 bytes) fit the 163 KiB a block of compute capability 8.0,
-- which the defaults exceed (D64 178688, D128 206336, D256 218368): the
-- runtime takes the first tuning that fits the device (runtime/attention_bwd.c).
-- pf: the kernel with the next step's Q, dout and rows loaded while this
-- step's dQ runs (attnb_kvq_f32p, templates/attention_bwd_f32.cuh; dQ reads
-- only dS^T and K), where the plain one makes every step wait for its loads
-- (no more shared memory or registers: D64 254 registers, no spill); pq:
-- pf plus the next step's dQ partial rows loaded with them (BM x (D + 4)
-- floats more shared memory) instead of read at dQ's start; pf_kinds: the
-- mask kinds that take pf (the others the plain kernel). Same bits as the
-- plain kernels (tests/test_attention_bwd.c). H200, run r1 of 2026-12-02
-- (05:22 UTC, same run, TFLOP/s, non-causal / causal): D128 S1k 32.1 / 29.0
-- (plain split) -> 32.8 / 29.6 (pf) -> 32.7 / 29.8 (pq), S4k 32.6 / 32.0 ->
-- 33.4 / 32.3 -> 33.4 / 32.6, S16k 32.6 / 32.7 -> 33.6 / 33.0 -> 33.6 / 33.3:
-- pq the D128 default; D64 S1k 29.4 / 25.4 -> 30.1 / 25.4 -> 30.2 / 25.3,
-- S4k 30.3 / 29.4 -> 31.0 / 29.2 -> 31.1 / 28.8, S16k 30.4 / 30.5 -> 31.2 /
-- 30.3 -> 31.2 / 29.8: D64's default took pf without the causal rule only
-- (until the unroll tunings below: pf under every kind).
-- ud, ua, uq (pf kernels only): the unroll factors of the dot products'
-- loop over D (f32_dots, 2 unless given), of dV / dK's loop over the
-- queries (f32_acc, 1) and of dQ's over the keys (f32_acc_tc, 4); 0: that
-- loop fully unrolled and software-pipelined (the next step's shared-memory
-- vectors loaded into a second register stage while this step's FMAs run).
-- The same arithmetic in the same order (the same bits), another
-- instruction schedule. Why: ncu on the H200 (run r1 of 2026-12-02, S4k,
-- one launch) had the old defaults' FFMA pipe 54% (D128) / 51% (D64) busy,
-- issuing on 64% / 60% of cycles with 2 warps a scheduler, the stalls
-- short scoreboard (shared-memory loads at each loop iteration's start,
-- 0.45 / 0.70 a issue), dispatch (0.42 / 0.39) and wait (0.28 / 0.37); at
-- D64 the dQ loop (4 keys an iteration, 64 FFMAs) took 23% of the samples,
-- its first FFMA alone 9%. Same run, run r2 (09:20 UTC, S4k B1 H16,
-- non-causal / causal TFLOP/s): D64 old default 31.0 / 29.3, unroll
-- 4/2/8 33.2 / 31.4, 4/2/16 33.6 / 31.8, 4/2/pipelined 33.9 / 32.2,
-- 2/1/8 32.2 / 30.2, pipelined/2/8 34.1 / 32.3 (the default since, under
-- every mask kind); D128 old default 33.3 / 32.4, 2/1/pipelined 33.2 /
-- 33.0, 2/2/4 34.3 / 33.5 (the default since), pipelined/2/8 34.7 / 32.5,
-- pipelined/1/4 33.5 / 32.6; run r1: D128 with all three pipelined 15.8
-- (10k FFMAs of unrolled code; the instruction cache is the likely cause,
-- not profiled; dropped).
-- D64 tuning 9 and D128 tuning 6 are the defaults before 2026-12-02 09:30.
-- x3: the tensor-core kvq kernel (attnb_kvq_tc<float, ...>) with every
-- product in split TF32 (3xTF32, templates/attention_bwd_x3.cuh): nkw key
-- warps of 16 keys, bm-query tiles (as tc_kvq's); g: dV / dK's n-tiles a
-- group (each group's step product in fresh accumulators; 2 keeps D64's
-- 128 x 64 kernel at 255 registers, 4 (the default) spills 24-40 bytes yet
-- ran 3-4% faster in run r2 of 2026-12-02: 38.5 / 31.9, 40.4 / 37.1, 40.8 /
-- 38.7 against 37.2 / 30.6, 38.8 / 35.9, 39.1 / 37.4 TFLOP/s at S1k, 4k,
-- 16k, non-causal / causal; FFMA tuning 0 32.8-34.5, PyTorch's efficient
-- 27.4-35.0 in that run: 1.15-1.19x). H200, run r1 of
-- 2026-12-02 (before the per-step sums; same run, TFLOP/s, non-causal /
-- causal, PyTorch's efficient backward in brackets): D64 128 keys x 64
-- queries S1k 40.0 / 32.9 (33.4 / 27.3), S4k 41.6 / 38.4 (35.1 / 31.2),
-- S16k 41.9 / 40.0 (34.6 / 32.7), where the FFMA tuning 0 ran 32.9-34.5;
-- 64 x 64 27.1-28.1 and 64 x 32 21.2-25.0 (dropped); D32 128 x 64: B4 H8
-- S2000 32.8 against FFMA 18.5 (efficient 18.4), B8 H16 S1024 causal 26.8
-- / 18.1 (15.5). Dropped for not beating FFMA: D128 64 keys x 32 queries
-- with dV / dK warps 26.6-30.8 (FFMA 30.8-34.6), without 24.9-28.5, 128 x
-- 16 27.9-32.5 (and spills); D96 64 x 32 23.4 / 26.2 (FFMA 23.4 / 27.5).
-- The f64-reference test failed at D128 before the per-step sums (dK of
-- MQA 8:1 off by 1e-5 relative; attention_bwd_x3.cuh).
M.f32_kvq = { [32] = { { bn = 64, bm = 64 }, { x3 = true, nkw = 8, bm = 64 } },
              [64] = { { x3 = true, nkw = 8, bm = 64, ch = 2 }, { bn = 64, bm = 64, lay = 1 } },
              [96] = { { x3 = true, nkw = 4, bm = 32, split = true, ch = 2 } },
              [128] = { { x3 = true, nkw = 8, bm = 16, ch = 2 }, { bn = 64, bm = 32, lay = 1 } },
              [256] = { { bn = 64, bm = 32 }, { bn = 32, bm = 32 } } }
-- Session 24 (the bundle's size, issue 11): the f32 tunings that no plan
-- can take left, 8 at D 64 and 8 at D 128 (48 kernels, 0.81 MiB of
-- fatbin). The runtime takes the default, and where the device's shared
-- memory a block is less, the first tuning in the list that fits
-- (kgi_attnb_fit); a tuning after one of the same or less shared memory, or
-- one larger than the default, is never that first. Left: D 64 tunings 2-9
-- (the plain 128 x 64 kernel, the prefetching one under every kind, the
-- unroll / pipelining tunings 4/2/8 (every kind but causal), 4/2/16,
-- 4/2/8, 4/2/pipelined, 2/1/8 and the default before 2026-12-02 09:30,
-- each 178688 bytes as tuning 0), D 128 tunings 0, 2, 3, 5-9 (the split-role
-- prefetching kernel with the dQ partial rows, the FFMA default until the
-- split-TF32 one, 206336 bytes, more than the default's 196864; the plain
-- and prefetching split-role kernels, 172544 as tuning 1; the unroll
-- tunings 2/1/pipelined, 2/1/4 (the default before 09:30), 32/1/8,
-- pipelined/2/8, pipelined/1/4, 206336). Their figures above stay as the
-- record; the templates keep attnb_kvq_f32p and its unroll arguments (D 64
-- tuning 0 uses them). D 128's list now starts with its default, so that
-- tuning 1 is still the 8 x 4-thread-warp kernel (its tests force "1").
-- Then (session 24, second step) also the FFMA tunings that would be that
-- first only for a shared-memory limit of no device this bundle runs on:
-- a block may take 166912 bytes on compute capability 8.0 and 8.7, 101376
-- on 8.6 and 8.9, 232448 on 9.0 (newer devices get no kernel image). D 64
-- tuning 0 (the prefetching FFMA kernel with the unroll / pipelining
-- choices above, 178688 bytes: between 178688 and 211968 only), D 96
-- tuning 0 (FFMA 64 x 64, 137728: between 137728 and 138752) and D 128's
-- 8 x 4-thread-warp 64 x 64 kernel (172544: between 172544 and 196864). So
-- every head dim's list starts with its default; D 64 and 128 keep the
-- FFMA tiles that fit 8.0 (64 x 64, 107008 bytes; 64 x 32, 122112) as
-- tuning 1. No kernel instantiates attnb_kvq_f32p since
-- (templates/attention_bwd_f32.cuh, kept).
-- Sessions 11-12 (2026-12-02/03): the x3 kernels split by CUTLASS's
-- integer rule (x3_int, templates/attention_bwd_x3.cuh), which made the
-- forward's split-TF32 kernel 23-30% faster than cvt.rna. H200, TFLOP/s,
-- non-causal / causal, same runs: e2f2467 (2026-12-02 20:07): D64 S4k 128
-- x 64 integer 51.9 / 48.2, cvt 38.8 / 37.1, 128 x 32 with Q and dout
-- split once a step into shared memory 43.8 / 40.7; D32 S4k B4 integer
-- 46.0, pre-split 43.7; D96 S4k 64 x 32 dV / dK warps 36.7 / 35.3,
-- pre-split 29.6 / 28.3, FFMA 28.4 / 27.9; D128 S1k-16k 128 x 16 38.6-40.0
-- / 33.2-39.4 against FFMA 33.7-34.6 / 30.9-34.4, yet every D128 x3 tuning
-- failed the f64-reference test (dK of MQA causal). ch: S^T and dP^T
-- summed from parts of ch k8 steps (the fix; attention_bwd_x3.cuh says
-- why). 792dd9d (2026-12-03 00:15, PyTorch's efficient backward in
-- brackets; every x3 test passed): D128 128 x 16 ch 2 38.0 / 33.0, 39.2 /
-- 37.7, 39.5 / 39.0 at S1k / 4k / 16k (35.3 / 28.9, 37.0 / 34.9, 36.8 /
-- 37.4), FFMA 33.7 / 30.8, 34.4 / 33.7, 34.6 / 34.4; the same with ch 1
-- 37.5-38.6 / 32.3-38.0, with pre-split 38.1-39.3 / 32.0-37.9, 64 x 32 dV /
-- dK warps ch 2 37.4-38.5 / 33.3-37.2; D96 S4k ch 2 36.4 / 34.4 (30.2 /
-- 28.1), pre-split 29.3 / 28.4, FFMA 28.5 / 27.9; D64 128 x 64 without ch
-- 49.6-52.5 / 41.2-50.6, with ch 2 45.8-49.4 / 40.5-49.6 (it passes the
-- tests without); D32 S4k integer 46.2, cvt 34.7 (20.3). Kept: the
-- fastest of each head dim (below); the others dropped.
-- Session 14: D64's split-TF32 kernel also sums S^T / dP^T from parts of 2
-- k8 steps (tuning 10, the default; the one-chain kernel of before and the
-- 128 x 64 tuning with dV / dK groups of 2 n-tiles dropped): the CPU
-- model of the kernels' dK error (test attention_bwd_reference::
-- split_tf32_tunings_meet_the_error_budget_in_a_host_model) put the one
-- chain at 0.61 of the GPU tests' bound (median of 64 seeds), over it on 2
-- of about 110 seeds (seed 16040142888: 1.61e-5 against 1.60e-5; seed 119:
-- 1.006x); with parts of 2: at most 0.36 of the bound on 64 seeds.
-- The f32 kvq tuning (0-based) taken where KG_ATTNB_TUNE names none (the
-- others: 0): split TF32 at every head dim but 256, where it beat FFMA.
M.f32_default = { [32] = 1, [64] = 0, [96] = 0, [128] = 0 }
-- f32 (FFMA, 256 threads): kv bn keys per block x bm queries per tile; q bm
-- queries per block x bn keys per tile.
M.f32_kv = { [32] = { bn = 64, bm = 64 }, [64] = { bn = 64, bm = 64 }, [96] = { bn = 64, bm = 64 },
             [128] = { bn = 64, bm = 64 }, [256] = { bn = 64, bm = 32 } }
M.f32_q = { [32] = { bm = 64, bn = 64 }, [64] = { bm = 64, bn = 64 }, [96] = { bm = 64, bn = 64 },
            [128] = { bm = 64, bn = 64 }, [256] = { bm = 64, bn = 32 } }

local dtypes = { "f32", "f16", "bf16" }

local function kvq_plan(dt, d, kind, tu)
  if dt.name == "f32" and not tu.x3 then
    if tu.pf and tu.pf_kinds and not tu.pf_kinds[kind] then
      tu = { bn = tu.bn, bm = tu.bm, lay = tu.lay, split = tu.split, minb = tu.minb }
    end
    local p, lay = d + 4, tu.lay or 0
    local pp = tu.bm + (lay == 1 and 8 or 4)
    if tu.split then lay = 1; pp = tu.bm + 8 end
    return { threads = 256, minb = tu.minb or 1, rows = tu.bn, tile = tu.bm, path = 1,
             smem = ((2 * tu.bn + 2 * tu.bm) * p + 2 * tu.bn * pp + 2 * tu.bm + (tu.pq and tu.bm * p or 0)) * 4,
             call = tu.pf and string.format("attnb_kvq_f32p<%d, %d, %d, %s, %s, %d, %s%s>", d, tu.bn, tu.bm,
                                            kind_enum[kind], tostring(tu.split or false), lay, tostring(tu.pq or false),
                                            (tu.ud or tu.ua or tu.uq) and string.format(", %d, %d, %d", tu.ud or 2,
                                                                                         tu.ua or 1, tu.uq or 4) or "")
                    or tu.split and string.format("attnb_kvq_f32s<%d, %d, %d, %s>", d, tu.bn, tu.bm, kind_enum[kind])
                    or lay == 0 and string.format("attnb_kvq_f32<%d, %d, %d, %s>", d, tu.bn, tu.bm, kind_enum[kind])
                    or string.format("attnb_kvq_f32<%d, %d, %d, %s, %d>", d, tu.bn, tu.bm, kind_enum[kind], lay),
             shape = string.format("%d keys x %d-query tiles, dQ partials, FFMA%s%s%s%s%s%s", tu.bn, tu.bm,
                                   lay == 1 and ", 8x4-thread warps" or "",
                                   tu.split and ", split roles (S^T + dV | dP^T + dK)" or "",
                                   tu.pf and ", next step's loads under dQ" or "",
                                   tu.pq and " (dQ partial too)" or "",
                                   (tu.minb or 1) > 1 and string.format(", %d blocks/SM", tu.minb) or "",
                                   (tu.ud or tu.ua or tu.uq) and string.format(", unroll %s/%s/%s",
                                     tu.ud == 0 and "pipelined" or tostring(tu.ud or 2),
                                     tu.ua == 0 and "pipelined" or tostring(tu.ua or 1),
                                     tu.uq == 0 and "pipelined" or tostring(tu.uq or 4)) or "") }
  end
  -- f32 (x3): f32 tiles of pitch D + 4 (tc_pad in templates/attention_bwd.cuh)
  local es = dt.name == "f32" and 4 or 2
  local pad = es == 4 and 4 or 8
  local bn, bm, p = 16 * tu.nkw, tu.bm, d + pad
  local nt = 32 * tu.nkw * (tu.split and 2 or 1)
  return { threads = nt, minb = 1, rows = bn, tile = bm, path = es == 4 and 3 or 0, parts = tu.ch,
           smem = (2 * bn + 4 * bm) * p * es + bn * (bm + pad) * es + 2 * bm * (d + 8) * 4 + 4 * bm * 4,
           call = string.format("attnb_kvq_tc<%s, %d, %d, %d, %s, %s%s>", dt.storage, d, tu.nkw, bm,
                                tostring(tu.split or false), kind_enum[kind],
                                tu.ch and string.format(", %d, %d", tu.g or 0, tu.ch) or tu.g and ", " .. tu.g or ""),
           shape = string.format("%d keys x %d-query tiles%s, dQ partials, %s%s%s", bn, bm,
                                 tu.split and ", dV/dK warps" or "",
                                 es == 4 and "mma.sync split TF32 (3xTF32)" or "mma.sync",
                                 tu.g and string.format(", dV/dK %d n-tiles a group", tu.g) or "",
                                 tu.ch and string.format(", S^T / dP^T in parts of %d k8", tu.ch) or "") }
end

local function plans(dt, d, kind)
  local ke = kind_enum[kind]
  if dt.name == "f32" then
    local kv, q = M.f32_kv[d], M.f32_q[d]
    local p = d + 4
    return {
      kv = { threads = 256, minb = 1, rows = kv.bn,
             smem = ((2 * kv.bn + 2 * kv.bm) * p + 2 * kv.bn * (kv.bm + 4) + 2 * kv.bm) * 4,
             call = string.format("attnb_kv_f32<%d, %d, %d, %s>", d, kv.bn, kv.bm, ke),
             shape = string.format("%d keys x %d-query tiles, FFMA", kv.bn, kv.bm) },
      q = { threads = 256, minb = 1, rows = q.bm,
            smem = ((2 * q.bm + 2 * q.bn) * p + q.bm * (q.bn + 4)) * 4,
            call = string.format("attnb_q_f32<%d, %d, %d, %s>", d, q.bm, q.bn, ke),
            shape = string.format("%d queries x %d-key tiles, FFMA", q.bm, q.bn) },
    }
  end
  local kv, q = M.tc_kv[d], M.tc_q[d]
  local p = d + 8
  local bn, bm = 16 * kv.nkw, 16 * q.nw
  return {
    kv = { threads = 32 * kv.nkw * (kv.split and 2 or 1), minb = 1, rows = bn,
           smem = (2 * bn + 4 * kv.bm) * p * 2 + 4 * kv.bm * 4,
           call = string.format("attnb_kv_tc<%s, %d, %d, %d, %s, %s>", dt.storage, d, kv.nkw, kv.bm,
                                tostring(kv.split or false), ke),
           shape = string.format("%d keys x %d-query tiles%s, mma.sync", bn, kv.bm, kv.split and ", dV/dK warps" or "") },
    q = { threads = 32 * q.nw, minb = 1, rows = bm, smem = (2 * bm + 4 * q.bn) * p * 2,
          call = string.format("attnb_q_tc<%s, %d, %d, %d, %s>", dt.storage, d, q.nw, q.bn, ke),
          shape = string.format("%d queries x %d-key tiles, mma.sync", bm, q.bn) },
  }
end

-- Hopper (sm_90a, wgmma): templates/attention_bwd_sm90.cuh's kvq kernel for
-- the head dims listed, nwg warpgroups (64 keys each), bm queries per tile.
-- Picked over the portable kvq on compute capability 9.0 (KG_ATTNB_TUNE=h<i>
-- picks tuning i, a plain number the portable one).
-- dqd: a step's dQ wgmma issued by the next step after its S^T and dP^T
-- (attnb_kvq_wg's DQD: on the tensor cores while P^T is formed; the barrier
-- that completed dS^T before dQ merges with the next step's first). H200,
-- session 10 (2026-12-02), TFLOP/s non-causal / causal, bf16 then f16 after
-- the semicolon. Run r2 (same run): D128 S16k 315.8 / 309.0; 309.8 / 301.1
-- against the plain kernel's 312.5 / 304.6; 304.6 / 297.0, S4k 313.5 /
-- 295.4; 295.2 / 308.5 against 294.5 / 289.4; 287.6 / 276.0 (+1.0-12%).
-- Run r1 (PyTorch's flash in the same run): S16k 319.3 / 310.7; 310.0 /
-- 302.8 (flash 306.4 / 306.5; 306.4 / 307.5), S4k 306.6 / 303.1; 294.8 /
-- 294.6 (flash 286.6 / 254.9; 283.6 / 253.1). Dropped: at D64 (128 x 128
-- tiles: 255 registers, 8-160 B spilled) dqd lost 2-9% (r1); storing the
-- deferred dQ before the next step's S^T / dP^T instead was within -3..+2%
-- of the plain kernel (r1); dqd with the next step's loads issued after the
-- step's wgmma lost 3-4% at D128 (r2); dV issued right after P^T (before
-- dS^T) made ptxas serialize the wgmma (registers written while one is in
-- flight, then too few registers: 48-92 B spilled), not measured.
-- Dropped in session 14 (H200, run s14r1, in turn with the default in one
-- process, microseconds, two readings each against the default's): the dQ
-- partials added in L2 (red.global.add.v2.f32, RED) with two dS^T stages
-- (one block barrier a step), tuning "h2" of session 13: D128 bf16 S16k
-- 35750 / 38043 against 35084 / 35904, causal 17687 / 17751 against 17853 /
-- 17877, f16 S16k 36674 / 38210 against 36025 / 38899, bf16 S4k causal (one
-- lane: dq from the partial read back) 4931 / 5234 against 4418 / 4723; D64
-- bf16 S16k 19241 / 19290 against 19289 / 19392, causal 10029 / 10027
-- against 10004 / 10060, f16 S16k 19723 / 19732 against 19903 / 19925,
-- causal 10286 against 9923 / 10412, f16 S4k 4757 / 5397 against 4895 /
-- 5312: not faster on every row. RED + two dS^T stages + three (Q, dout)
-- stages with a step's dV / dK left running past the next barrier, P^T and
-- dS^T read from shared memory (D128 "h3"): 35-53% more time on every row
-- (S16k 48698 against 35084). RED alone ("h1") was not timed.
-- Also dropped (session 14, run s14r2, same process, in turn, us, two
-- readings each): the deferred dQ rows stored after the step's dV / dK
-- wgmma were issued, while they run (the same bits; 255 registers, no
-- spill): D128 bf16 S16k 37900 / 38328 against the default's 35066 / 35281,
-- causal 20004 / 20056 against 18261 / 17942, f16 S16k 38979 / 39202
-- against 36191 / 37271, causal 20312 / 20403 against 18526 / 18513, bf16
-- S4k causal (one lane) 5162 / 5426 against 4463 / 4983: 5-16% slower.
-- (D 64's second tuning, one warpgroup on 64-key blocks of 64-query tiles,
-- picked only by KG_ATTNB_TUNE=h1 since the first Hopper kernel
-- (2026-12-01), never the default and with no recorded figures, left in
-- session 24 with its query-split instance: 12 kernels, 0.1 MiB.)
M.wg_kvq = {
  [64] = { { nwg = 2, bm = 128 } },
  [128] = { { nwg = 2, bm = 64, dqd = true } },
  -- D 32 and 96 (session 31, measured in round s31r1 on an NVIDIA H100 80GB
  -- HBM3, 2026-12-05; the default since session 32): the same kernel on
  -- tiles of 32-element panels in the 64-byte swizzle (sw = 64: attnb_kvq_wg's
  -- SWB), no padding. D 32 takes D 64's shape (128 x 128 tiles, dQ by query
  -- rows; dV, dK and dQ 32 wide), D 96 D 128's (128 x 64, dQ deferred a
  -- step; dV, dK 96 wide, dQ by head-dim panels 64 + 32). Against main's
  -- portable mma.sync kvq (x = its time / this one's, best of 3 rounds): D 96
  -- geomean x 1.381 over 10 rows (6 named bf16 B32 / 8 / 2 H16 S 1k / 4k /
  -- 16k, causal and not: x 1.298-1.539; worst x 1.179, bf16 B1 Hq8 Hkv2
  -- S6464), D 32 x 1.514 over 13 (named x 1.372-1.817; worst x 1.291, bf16
  -- B1 H8 S4096). Dropped (lost to them in the same round): the tiles padded
  -- to whole 64-element panels (128-byte swizzle), D 32 x 1.354 geomean,
  -- D 96 with the deferred dQ x 1.330, without it x 1.296.
  [32] = { { nwg = 2, bm = 128, sw = 64 } },
  [96] = { { nwg = 2, bm = 64, dqd = true, sw = 64 } },
  -- D 256 (session 31's candidate h1; the default since session 32, pending
  -- the rerun of the named causal row, see below): hd, the kernel whose
  -- two warpgroups split the head dim (attnb_kvq_wgd, templates/
  -- attention_bwd_sm90d.cuh): 64-key blocks, each warpgroup dK / dV of all 64
  -- keys x 128 columns, S^T / dP^T in both; kvo: dK / dV alone, run as the
  -- separate dq pass's kv kernel (path 4 in the table; attnb_q_tc writes
  -- dq). The portable kvq does not fit D 256 (tc_kvq): off Hopper its
  -- default is the separate dq pass with the portable kv kernel. Round s31r1 (NVIDIA H100
  -- 80GB HBM3, 2026-12-05), x = main's time / this one's: bf16 H16 B32 S1024
  -- x 1.321, causal x 1.315, B8 S4096 x 1.335, 5 other rows x 1.327-1.390;
  -- the named B8 S4096 causal row was cut by the step's timeout (timed in
  -- session 32: x 1.374 on an NVIDIA H200). Dropped
  -- (session 32): the fused forms (h0: dQ partials through global memory;
  -- h2: S^T / dP^T once, one warpgroup each), x 0.993 and x 0.975 on bf16
  -- B8 H16 S4096 D256.
  [256] = { { nwg = 2, bm = 64, hd = true, kvo = true } },
}
M.max_tunes90 = 1
-- Hopper dQ kernels of the separate dq pass (templates/attention_bwd_sm90q.cuh,
-- attnb_q_wg: 2 warpgroups on 128 query rows, each keeping dQ of its 64 rows
-- x D in registers, K / V tiles of 32 keys through 3 stages, the next one
-- loaded ahead, S / dP / dQ on wgmma), module attnb90q_<dtype>. M.wgq_default:
-- the separate pass's dq kernel on compute capability 9.0 (the entry's
-- defq90; KG_ATTNB_TUNE=sep keeps attnb_q_tc, "hq" forces it). D 256: session
-- 32's hq0, made the default by round s33r1 (NVIDIA H200, 2026-12-06): x 1.387
-- .. 1.508 over main's attnb_q_tc on 10 rows, geomean x 1.461; hq1 (the tile
-- after next loaded ahead) qualified at geomean x 1.423 and was removed.
M.wg_q = { [256] = { { bm = 128, bn = 32, stages = 3 } } }
M.wgq_default = { [256] = true }
M.max_q90 = 1
-- The head dim as the tiles hold it (attnb_kvq_wg's DP): whole panels of 64
-- elements, or of 32 in the 64-byte swizzle (sw = 64); no padding (the
-- padded D 32 / 96 tilings lost in session 31's round s31r1).
local function wg_dp(d, tu)
  local pw = (tu.sw or 128) // 2
  assert(d % pw == 0, "Hopper kvq tiles: the head dim must be whole panels")
  return d
end
-- The head dims whose Hopper tuning 0 the runtime takes by default on
-- compute capability 9.0 (their kernels in the module attnb90_<dtype>); the
-- others' Hopper tunings run only where KG_ATTNB_TUNE=h<i> names one (module
-- attnb90c_<dtype>).
M.wg_default = { [32] = true, [64] = true, [96] = true, [128] = true, [256] = true }

local function wg_plan(dt, d, kind, tu, spl)
  if tu.hd then
    -- dK / dV alone (kvo): 1 KiB alignment slack, K and V (64 keys), two
    -- stages of (Q, dout), a 64 x 64 slot it does not use (the dS^T tile of
    -- the fused form it was measured with), two stages of the rows
    assert(tu.kvo, "attnb_kvq_wgd is the dK / dV-only kernel")
    local smem = 1024 + 2 * 64 * d * 2 + 4 * tu.bm * d * 2 + 64 * tu.bm * 2 + 4 * tu.bm * 4
    return { threads = 256, minb = 1, rows = 64, tile = tu.bm, smem = smem, path = 4,
             call = string.format("attnb_kvq_wgd<%s, %d, %d, %s>", dt.storage, d, tu.bm, kind_enum[kind]),
             shape = string.format("64 keys x %d-query tiles, dK and dV alone (the separate dq pass's kv kernel), "
                                   .. "2 warpgroups on head-dim halves, wgmma", tu.bm) }
  end
  local bn, bm = 64 * tu.nwg, tu.bm
  local nt = 128 * tu.nwg
  -- 1 KiB alignment slack, K, V, two stages of (Q, dout) (tiles of whole
  -- panels: wg_dp, attnb_kvq_wg's DP), dS^T, two stages of the f32 partial
  -- tile (pitch D + 8) and of the rows
  local dp = wg_dp(d, tu)
  local smem = 1024 + 2 * bn * dp * 2 + 4 * bm * dp * 2 + bn * bm * 2 + 2 * bm * (d + 8) * 4 + 4 * bm * 4
  return { threads = nt, minb = 1, rows = bn, tile = bm, smem = smem, path = 2,
           call = string.format("attnb_kvq_wg<%s, %d, %d, %d, %s%s%s%s>", dt.storage, d, tu.nwg, bm, kind_enum[kind],
                                (spl or tu.dqd or tu.sw) and ", " .. tostring(spl or false) or "",
                                (tu.dqd or tu.sw) and ", " .. tostring(tu.dqd or false) or "",
                                tu.sw and ", " .. tu.sw or ""),
           shape = string.format("%d keys x %d-query tiles, dQ partials, %d warpgroups, wgmma%s%s%s", bn, bm, tu.nwg,
                                 tu.dqd and ", dQ deferred a step" or "",
                                 tu.sw and string.format(", %d-byte swizzle", tu.sw) or "",
                                 spl and ", query splits" or "") }
end

-- The Hopper dQ kernel (M.wg_q; attnb_q_wg fixes its shape: 128 query rows,
-- 32-key tiles, 3 stages): 1 KiB alignment slack, Q and dout (bm x D), the
-- stages of (K, V) (bn x D each); lse2 and delta in registers
local function wgq_plan(dt, d, kind, tu)
  assert(tu.bm == 128 and tu.bn == 32 and tu.stages == 3, "attnb_q_wg: 128 query rows, 32-key tiles, 3 stages")
  local smem = 1024 + 2 * tu.bm * d * 2 + tu.stages * 2 * tu.bn * d * 2
  return { threads = 256, minb = 1, rows = tu.bm, smem = smem,
           call = string.format("attnb_q_wg<%s, %d, %s>", dt.storage, d, kind_enum[kind]),
           shape = string.format("%d queries x %d-key tiles, %d stages, 2 warpgroups, wgmma", tu.bm, tu.bn, tu.stages) }
end

-- kg_wgmma_bwd.cuh: wgmma.mma_async m64nNk16 wrappers (f32 accumulators)
-- for the N the kernel uses, in namespace kg_attnb:
--   wgb<T, N>::ss(d, a, b, acc)    A, B from shared memory, both K-major
--   wgb<T, N>::rs(d, a[4], b, acc) A from registers, B N-major
-- are gen/wgmma.lua's wrappers (the forward's wg<T, N>), renamed so that
-- the backward's N list does not depend on the forward's; and
--   wgt<T, N>::sstt(d, a, b, acc)  A M-major, B N-major (dQ = dS K)
-- written here.
local function wg_header(G, ns)
  local text = require("wgmma").header(G, ns):gsub("gen/wgmma.lua", "gen/attention_bwd.lua (gen/wgmma.lua's wrappers)", 1)
  local function sub(pat, rep)
    local n
    text, n = text:gsub(pat, rep)
    assert(n > 0, "gen/wgmma.lua's header changed: no '" .. pat .. "' to rename")
  end
  sub("KG_WGMMA_CUH", "KG_WGMMA_BWD_CUH")
  sub("namespace kg_attn ", "namespace kg_attnb ")
  sub("namespace kg_attn\n", "namespace kg_attnb\n")
  sub("struct wg<", "struct wgb<")
  sub("struct wg;", "struct wgb;")
  local types = { { "__half", "f16" }, { "__nv_bfloat16", "bf16" } }
  local parts = { "\nnamespace kg_attnb {\n\n/* wgmma m64nNk16, A M-major and B N-major (transposed) from shared memory */\n" ..
                  "template <typename T, int N> struct wgt;\n" }
  for _, ty in ipairs(types) do
    for _, n in ipairs(ns) do
      local nd = n / 2
      local regs, cons = require("wgmma").operands(n)
      local instr = string.format("wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s", n, ty[2], ty[2])
      parts[#parts + 1] = string.format([[
template <> struct wgt<%s, %d> {
    static __device__ __forceinline__ void sstt(float (&d)[%d], uint64_t a, uint64_t b, int acc)
    {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %%%d, 0;\n"
                     "%s {%s}, %%%d, %%%d, p, 1, 1, 1, 1;\n}\n"
                     : %s
                     : "l"(a), "l"(b), "r"(acc));
    }
};
]], ty[1], n, nd, nd + 2, instr, regs, nd, nd + 1, cons)
    end
  end
  parts[#parts + 1] = "\n} // namespace kg_attnb\n"
  -- the sstt wrappers go inside the include guard
  local body = table.concat(parts)
  local at = text:find("#endif%s*$")
  assert(at, "gen/wgmma.lua's header changed: no closing #endif")
  return text:sub(1, at - 1) .. body .. "\n#endif\n"
end

function M.generate(G)
  G:dep(G.root .. "/templates/attention_bwd.cu")
  G:dep(G.root .. "/gen/wgmma.lua")
  local by = require("common").by_name(G.dtypes)
  local rows = {}
  for _, name in ipairs(dtypes) do
    local dt = by[name]
    local module = G:module("attnb_" .. name)
    local module90 = name ~= "f32" and G:module("attnb90_" .. name, { sm90a = true }) or nil
    -- the forced-only Hopper kernels (head dims not in M.wg_default; none
    -- since session 32: no module then)
    local any90c = false
    for d in pairs(M.wg_kvq) do any90c = any90c or not M.wg_default[d] end
    local module90c = name ~= "f32" and any90c and G:module("attnb90c_" .. name, { sm90a = true }) or nil
    -- the Hopper dQ kernels (M.wg_q): their own module, so that a call loads
    -- only what it runs and attnb90_<dtype> stays as it was
    local module90q = name ~= "f32" and next(M.wg_q) and G:module("attnb90q_" .. name, { sm90a = true }) or nil
    local kernels, kernels90, kernels90c, kernels90q = {}, {}, {}, {}
    local function add_to(mod, list, kname, pl, desc)
      local idx = G:kernel({ name = kname, module = mod, vec = 1, desc = desc })
      list[#list + 1] = { name = kname, threads = pl.threads, minb = pl.minb, call = pl.call, desc = desc }
      return string.format("{%d, %d, %d, %d, %d, %d, %d}", idx, pl.threads, pl.rows, pl.tile or 0, pl.smem, pl.path or 0,
                           pl.parts or 0)
    end
    -- pre and dqsum -> attnb_<dtype>; the rest of head dim d -> attnb_<dtype>_d<d>
    local function add_small(kname, pl, desc) return add_to(module, kernels, kname, pl, desc) end
    local per_dim = {}
    for di, d in ipairs(M.dims) do
      local dname = string.format("attnb_%s_d%d", name, d)
      local dmod, dkernels = G:module(dname), {}
      local pf = false
      for _, tu in ipairs(name == "f32" and M.f32_kvq[d] or {}) do pf = pf or tu.pf or false end
      per_dim[#per_dim + 1] = { name = dname, d = d, kernels = dkernels, pf = pf }
      local function add(kname, pl, desc) return add_to(dmod, dkernels, kname, pl, desc) end
      local pre = add_small(string.format("kg_attnb_%s_d%d_pre", name, d),
                            { threads = 256, minb = 1, rows = 8, smem = 0,
                              call = string.format("attnb_pre<%s, %d>", dt.storage, d) },
                            string.format("attention backward %s D=%d: delta = rowsum(dout * out), lse2", name, d))
      local kv, q = {}, {}
      for _, kind in ipairs(M.kinds) do
        local pl = plans(dt, d, kind)
        kv[#kv + 1] = add(string.format("kg_attnb_%s_d%d_%s_kv", name, d, kind), pl.kv,
                          string.format("attention backward %s D=%d %s: dK, dV (%s)", name, d, kind, pl.kv.shape))
        q[#q + 1] = add(string.format("kg_attnb_%s_d%d_%s_q", name, d, kind), pl.q,
                        string.format("attention backward %s D=%d %s: dQ (%s)", name, d, kind, pl.q.shape))
      end
      local kvq, dqsum, dkvsum, tunes = {}, "{0, 0, 0, 0, 0}", "{0, 0, 0, 0, 0}", {}
      local kvq90, kvq90s, tunes90 = {}, {}, {}
      local mod90, list90 = module90, kernels90
      if not M.wg_default[d] then mod90, list90 = module90c, kernels90c end
      if name ~= "f32" and M.wg_kvq[d] then
        tunes90 = M.wg_kvq[d]
        assert(#tunes90 <= M.max_tunes90, "too many Hopper kvq tunings")
        for ti, tu in ipairs(tunes90) do
          local per = {}
          for _, kind in ipairs(M.kinds) do
            local pl = wg_plan(dt, d, kind, tu)
            per[#per + 1] = add_to(mod90, list90, string.format("kg_attnb90_%s_d%d_%s_kvq%d", name, d, kind, ti - 1),
                                   pl, string.format("attention backward %s D=%d %s: dK, dV%s (%s)", name, d, kind,
                                                     tu.kvo and "" or ", dQ partials", pl.shape))
          end
          kvq90[#kvq90 + 1] = "{" .. table.concat(per, ", ") .. "}"
          -- the same kernel for query splits (the instance above keeps the
          -- registers it had before them)
          local pers = {}
          for ki, kind in ipairs(M.kinds) do
            if tu.kvo then
              -- (a dK / dV-only tuning runs without splits: its own launch again)
              pers[#pers + 1] = per[ki]
            else
              local pl = wg_plan(dt, d, kind, tu, true)
              pers[#pers + 1] = add_to(mod90, list90,
                                       string.format("kg_attnb90_%s_d%d_%s_kvq%ds", name, d, kind, ti - 1), pl,
                                       string.format("attention backward %s D=%d %s: dK, dV, dQ partials (%s)", name,
                                                     d, kind, pl.shape))
            end
          end
          kvq90s[#kvq90s + 1] = "{" .. table.concat(pers, ", ") .. "}"
        end
      end
      do
        tunes = name == "f32" and M.f32_kvq[d] or M.tc_kvq[d]
        assert(#tunes <= M.max_tunes, "too many kvq tunings")
        for ti, tu in ipairs(tunes) do
          local per = {}
          for _, kind in ipairs(M.kinds) do
            local pl = kvq_plan(dt, d, kind, tu)
            per[#per + 1] = add(string.format("kg_attnb_%s_d%d_%s_kvq%d", name, d, kind, ti - 1), pl,
                                string.format("attention backward %s D=%d %s: dK, dV, dQ partials (%s)", name, d,
                                              kind, pl.shape))
          end
          kvq[#kvq + 1] = "{" .. table.concat(per, ", ") .. "}"
        end
        dqsum = add_small(string.format("kg_attnb_%s_d%d_dqsum", name, d),
                          { threads = 256, minb = 1, rows = 0, smem = 0,
                            call = string.format("attnb_dqsum<%s, %d>", dt.storage, d) },
                          string.format("attention backward %s D=%d: dq = scale * sum of the dQ partials", name, d))
        dkvsum = add_small(string.format("kg_attnb_%s_d%d_dkvsum", name, d),
                           { threads = 256, minb = 1, rows = 0, smem = 0,
                             call = string.format("attnb_dkvsum<%s, %d>", dt.storage, d) },
                           string.format("attention backward %s D=%d: dk, dv = sums of the query splits' partials",
                                         name, d))
      end
      local q90 = {}
      if module90q and M.wg_q[d] then
        assert(#M.wg_q[d] <= M.max_q90, "too many Hopper dQ tunings")
        for ti, tu in ipairs(M.wg_q[d]) do
          local per = {}
          for _, kind in ipairs(M.kinds) do
            local pl = wgq_plan(dt, d, kind, tu)
            per[#per + 1] = add_to(module90q, kernels90q,
                                   string.format("kg_attnb90_%s_d%d_%s_q%d", name, d, kind, ti - 1), pl,
                                   string.format("attention backward %s D=%d %s: dQ (%s)", name, d, kind, pl.shape))
          end
          q90[#q90 + 1] = "{" .. table.concat(per, ", ") .. "}"
        end
      end
      local def = name == "f32" and M.f32_default[d] or 0
      assert(def < math.max(#tunes, 1), "default kvq tuning out of range")
      rows[#rows + 1] = string.format("    [%s][%d] = {%s, {%s}, {%s}, {%s}, %s, %s, %d, %d, {%s}, %d, {%s}, %d, {%s}, %d, %d},\n",
                                      dt.enum, di - 1, pre, table.concat(kv, ", "), table.concat(q, ", "),
                                      #kvq > 0 and table.concat(kvq, ", ") or "{{0, 0, 0, 0, 0}}", dqsum, dkvsum, #tunes,
                                      def,
                                      #kvq90 > 0 and table.concat(kvq90, ", ") or "{{0, 0, 0, 0, 0}}", #tunes90,
                                      #kvq90s > 0 and table.concat(kvq90s, ", ") or "{{0, 0, 0, 0, 0}}",
                                      (#kvq90 > 0 and M.wg_default[d]) and 1 or 0,
                                      #q90 > 0 and table.concat(q90, ", ") or "{{0, 0, 0, 0, 0}}", #q90,
                                      (#q90 > 0 and M.wgq_default[d]) and 1 or 0)
    end
    G:write("attnb_" .. name .. ".cu", G:render("attention_bwd.cu", {
      header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
      dtype = dt, dims = M.dims, kinds = M.kinds, kernels = kernels,
      path = "the delta pass and the dQ sum", include = "attention_bwd.cuh",
    }))
    for _, pd in ipairs(per_dim) do
      G:write(pd.name .. ".cu", G:render("attention_bwd.cu", {
        header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
        dtype = dt, dims = { pd.d }, kinds = M.kinds, kernels = pd.kernels,
        path = name == "f32" and "FFMA" or "mma.sync",
        include = pd.pf and "attention_bwd_f32.cuh" or "attention_bwd.cuh",
      }))
    end
    if module90 then
      local d90, d90c = {}, {}
      for _, d in ipairs(M.dims) do
        if M.wg_kvq[d] and M.wg_default[d] then d90[#d90 + 1] = d elseif M.wg_kvq[d] then d90c[#d90c + 1] = d end
      end
      G:write("attnb90_" .. name .. ".cu", G:render("attention_bwd.cu", {
        header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
        dtype = dt, dims = d90, kinds = M.kinds, kernels = kernels90,
        path = "wgmma (sm_90a)", include = "attention_bwd_sm90d.cuh", -- (it includes attention_bwd_sm90.cuh)
      }))
      if module90q then
        local dq = {}
        for _, d in ipairs(M.dims) do
          if M.wg_q[d] then dq[#dq + 1] = d end
        end
        G:write("attnb90q_" .. name .. ".cu", G:render("attention_bwd.cu", {
          header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
          dtype = dt, dims = dq, kinds = M.kinds, kernels = kernels90q,
          path = "wgmma (sm_90a) dQ of the separate pass",
          include = "attention_bwd_sm90q.cuh",
        }))
      end
      if module90c then
        G:write("attnb90c_" .. name .. ".cu", G:render("attention_bwd.cu", {
          header = G.header("templates/attention_bwd.cu and gen/attention_bwd.lua"),
          dtype = dt, dims = d90c, kinds = M.kinds, kernels = kernels90c,
          path = "wgmma (sm_90a), forced only (KG_ATTNB_TUNE=h<i>)", include = "attention_bwd_sm90d.cuh",
        }))
      end
    end
  end
  local dims = {}
  for i, d in ipairs(M.dims) do dims[i] = tostring(d) end
  G:write("kg_attnb_table.h", G.header("gen/attention_bwd.lua") .. string.format([[
#ifndef KG_ATTNB_TABLE_H
#define KG_ATTNB_TABLE_H

#include "kg_core.h"
#include "attention_bwd_params.h"

#define KG_ATTNB_DIM_COUNT %d
/* The generated head dims, in slot order, and as text for messages. */
extern const int kg_attnb_dims[KG_ATTNB_DIM_COUNT];
#define KG_ATTNB_DIMS_TEXT "%s"

typedef struct kg_attnb_launch {
    int16_t kernel;  /* index into kg_kernels; 0 with threads 0: not generated */
    int16_t threads; /* block size */
    int16_t rows;    /* pre: rows per block; kv, kvq: keys per block; q: queries per block */
    int16_t tile;    /* kvq: queries per tile */
    int32_t smem;    /* dynamic shared memory, bytes */
    int32_t path;    /* kvq: the steps' arithmetic for the query splits' model (kgi_attnb_split): 0 mma.sync,
                        1 FFMA, 2 wgmma, 3 split TF32; 4 (a Hopper tuning): wgmma dK / dV alone, run as the
                        separate dq pass's kv kernel */
    int32_t parts;   /* path 3: S^T and dP^T summed from parts of this many k8 steps (0: one chain) */
} kg_attnb_launch;

#define KG_ATTNB_MAX_TUNES %d
#define KG_ATTNB_MAX_TUNES90 %d
#define KG_ATTNB_MAX_Q90 %d

typedef struct kg_attnb_entry {
    kg_attnb_launch pre;
    kg_attnb_launch kv[KG_ATTN_KIND_COUNT];
    kg_attnb_launch q[KG_ATTN_KIND_COUNT];
    /* the fused path (f16 / bf16): kvq tunings (the first is the default) and dqsum */
    kg_attnb_launch kvq[KG_ATTNB_MAX_TUNES][KG_ATTN_KIND_COUNT];
    kg_attnb_launch dqsum;
    kg_attnb_launch dkvsum; /* the portable kvq's query splits: dk, dv from the splits' partials */
    int32_t ntunes; /* 0: no fused path */
    int32_t kvq_default; /* the kvq tuning taken where KG_ATTNB_TUNE names none */
    /* Hopper kvq tunings (sm_90a modules; ntunes90 == 0: none for this head dim) */
    kg_attnb_launch kvq90[KG_ATTNB_MAX_TUNES90][KG_ATTN_KIND_COUNT];
    int32_t ntunes90;
    /* the same Hopper kernels for query splits (params splits > 1) */
    kg_attnb_launch kvq90s[KG_ATTNB_MAX_TUNES90][KG_ATTN_KIND_COUNT];
    int32_t def90; /* 1: Hopper tuning 0 is the default on compute capability 9.0; 0: the Hopper tunings run
                      only where KG_ATTNB_TUNE=h<i> names one */
    /* the Hopper dQ kernel of the separate dq pass (sm_90a module attnb90q_<dtype>; KG_ATTNB_TUNE=hq forces it) */
    kg_attnb_launch q90[KG_ATTNB_MAX_Q90][KG_ATTN_KIND_COUNT];
    int32_t nq90; /* 0: none for this head dim */
    int32_t defq90; /* 1: q90[0] is the separate pass's dq kernel on compute capability 9.0 (not under
                       KG_ATTNB_TUNE=sep) */
} kg_attnb_entry;

/* [q dtype][head dim slot]; pre.threads == 0 where not generated. */
extern const kg_attnb_entry kg_attnb_table[KG_DTYPE_COUNT][KG_ATTNB_DIM_COUNT];

#endif
]], #M.dims, table.concat(dims, ", "), M.max_tunes, M.max_tunes90, M.max_q90))
  local ns, seen = {}, {}
  for d, tunes in pairs(M.wg_kvq) do
    for _, tu in ipairs(tunes) do
      -- (attnb_kvq_wg's QC and QL: the dQ warpgroups' widths; attnb_kvq_wgd:
      -- the query tile and the head-dim half)
      local dp, pw = wg_dp(d, tu), (tu.sw or 128) // 2
      local qc = tu.bm == 64 * tu.nwg and dp or (dp // tu.nwg + pw - 1) // pw * pw
      local ql = tu.bm == 64 * tu.nwg and dp or dp - (tu.nwg - 1) * qc
      if tu.hd then dp, qc, ql = d // 2, d // 2, d // 2 end
      for _, n in ipairs({ tu.bm, dp, qc, ql }) do
        if not seen[n] then seen[n] = true; ns[#ns + 1] = n end
      end
    end
  end
  -- (attnb_q_wg: S / dP m64n<bn>, dQ m64n<D>)
  for d, tunes in pairs(M.wg_q) do
    for _, tu in ipairs(tunes) do
      for _, n in ipairs({ tu.bn, d }) do
        if not seen[n] then seen[n] = true; ns[#ns + 1] = n end
      end
    end
  end
  table.sort(ns)
  G:write("kg_wgmma_bwd.cuh", wg_header(G, ns))
  G:write("kg_attnb_table.c", G.header("gen/attention_bwd.lua") .. '#include "kg_attnb_table.h"\n\n' ..
    "const int kg_attnb_dims[KG_ATTNB_DIM_COUNT] = {" .. table.concat(dims, ", ") .. "};\n\n" ..
    "const kg_attnb_entry kg_attnb_table[KG_DTYPE_COUNT][KG_ATTNB_DIM_COUNT] = {\n" ..
    table.concat(rows) .. "};\n")
end

return M
