-- attention.lua - the flash attention family: one kernel per dtype x head dim
-- x mask kind, from templates/attention.cu + templates/attention.cuh (which
-- includes attention_common.cuh, attention_tc.cuh and attention_f32.cuh).
--
-- The main variants (the full list is `variants` below):
--   portable  attn_<dtype>.cu, built for every arch of the bundle: f16/bf16
--             on mma.sync, every head dim;
--   f32       attn_x3_f32.cu (attention_x3.cuh): split TF32 on mma.sync,
--             every arch of the bundle; attn_narrow_f32.cu: FFMA with 16-row
--             blocks, for problems whose grid would not fill the GPU;
--   Hopper    attn90_<dtype>.cu, built for sm_90a only (build.ninja's
--             fatbin90 rule): f16/bf16 on wgmma for the head dims of M.sm90.
-- and kg_attn_table.c / .h: [variant][dtype][head dim slot][kind] -> kernel
-- index, threads, query rows per block and dynamic shared memory, which
-- runtime/attention.c dispatches on. Also writes kg_wgmma.cuh
-- (gen/wgmma.lua) with the wgmma shapes the Hopper path uses.
local M = {}

M.dims = { 32, 64, 96, 128, 256 }
-- in the order of kg_attn_kind (templates/attention_params.h)
M.kinds = { "none", "causal", "mask" }
local kind_enum = { none = "KG_ATTN_NONE", causal = "KG_ATTN_CAUSAL", mask = "KG_ATTN_MASK" }

-- Tile shapes. Tensor cores: nw warps of mt x 16 query rows each, bn keys per
-- tile, qreg keeps the warp's Q fragments in registers (else re-read from
-- shared memory with ldmatrix). Pitch is D + 8 elements (conflict-free
-- ldmatrix). f32: 256 threads, 64 query rows, bn keys, pitch D + 4.
-- minb is the launch bound's blocks per SM (a register cap). Measured on the
-- H200 (bf16, B=8 H=16 S=4096, not causal): D=128 went from 234 TFLOP/s with
-- 4x1 warps x 64 keys, Q in registers, to 271 with 2 m-tiles per warp and 32
-- keys (K/V fragments reused twice, 238 registers, 2 blocks per SM); D=64 was
-- best as below (237; 1 m-tile per warp or 3-4 blocks per SM were slower).
-- f32 (H200, [2,16,4096,128], TFLOP/s): the first kernel (64 query rows, 4 x 4
-- scores and 4 x 8 outputs per thread) measured 30.7 with 64 keys per tile,
-- 29.7 with 32; 128 rows (8 x 4 scores and 8 x 8 outputs per thread) 37.4
-- with 64 keys, 35.1 with 48, 31.4 with 32; 96 rows 32.9. The wide kernel
-- leaves small problems with few blocks: [2,8,128,64] causal takes 22 us
-- with 128 rows, 15 us with 64, 12.3 us with 32, 10.8 us with 16, hence the
-- narrow variant (16 rows) the runtime takes when the wide grid would not
-- cover the multiprocessors. At D=128, 128 keys per tile with P written over
-- the K tile (8 x 8 scores per thread; the next tiles load after P V instead
-- of during it) measured 39.9 / 34.0 causal against 37.3 / 32.4 (96 rows:
-- 36.0); at other head dims P does not fit in the K tile. 64 x 64 tiles with P
-- over K at 128 registers, two blocks (16 warps) per SM: 33.0 / 30.9. 512 threads per block (16 warps, 4 x 4 scores
-- per thread, 128 registers) measured 32.9 at 128 x 64: the lost reuse
-- outweighs the hidden latency (ncu at 256 threads: 70% of issue slots busy,
-- 80% of the issued instructions FFMA, 2 warps per scheduler).
M.tc = {
  [32] = { nw = 4, mt = 2, bn = 64, qreg = true },
  [64] = { nw = 4, mt = 2, bn = 64, qreg = false },
  [96] = { nw = 4, mt = 2, bn = 32, qreg = false, minb = 2 },
  [128] = { nw = 4, mt = 2, bn = 32, qreg = false, minb = 2 },
  [256] = { nw = 4, mt = 1, bn = 32, qreg = false },
}
-- (Session 10: the wide FFMA kernels above (128 rows; D 128 128 x 128 with P
-- over K) left the bundle: the split-TF32 kernel below was faster on every
-- shape measured (r3: 26-40%); the narrow one (16 rows) stays for grids that
-- would not fill the GPU.)
M.f32_narrow = { bm = 16, bn = 64 }
-- f32 on the tensor cores as split TF32 (attention_x3.cuh): attn_x3, both
-- products on the tensor cores: nw warps of 16 query rows, bn keys per tile,
-- minb blocks per SM ((16 nw + 2 bn) (D + 4) floats of shared memory a
-- block). H200, session 10 r1, us, same process, FFMA (attn_f32) / x3 nw 4 /
-- alternative tiles: [2,16,4096,128] 6958 / 6767 / 7092 (bn 32, 3 blocks),
-- causal 4009 / 3773 / 4054; D 64 S 4k 8508 / 6728 / 7048; D 96 11714 /
-- 10114 / 10562; D 32 causal 5894 / 3874 / 3823 (8 warps); D 256 S 4k causal
-- 10843 / 10876 (4 warps, one block) / 8198 (8 warps): the same 40.6-40.9
-- TFLOP/s at D 64-128 whatever the occupancy (4 to 12 warps a
-- multiprocessor), with the split by cvt.rna (since r3 by integer rounding,
-- below).
M.x3 = {
  [32] = { nw = 4, bn = 64, minb = 4 },
  [64] = { nw = 4, bn = 64, minb = 3 },
  [96] = { nw = 4, bn = 64, minb = 2 },
  [128] = { nw = 4, bn = 64, minb = 2 },
  [256] = { nw = 8, bn = 32, minb = 1 },
}
-- attn_x3f (session 10 r2: Q K^T split TF32, P V by FFMA, two blocks a
-- multiprocessor, so that the tensor and FMA pipes would work at once) lost
-- on every row and was removed: us, x3 / x3f / x3f with fewer keys per tile,
-- [2,16,4096,128] 6756 / 8102 / 9142, causal 3741 / 4449 / 5201, D 64 S 4k
-- 6788 / 7951 / 8277, D 256 causal 8206 / 10268 / 12641 (and the FFMA
-- kernel: 6955, 4010, 8508, 10842): both products compete for the same issue
-- slots. The x3 kernel's rate is bounded by what it issues per mma: r3
-- (us, same process) with the split by integer rounding (x3s_split) instead
-- of two cvt.rna: [2,16,4096,128] 5171 / 6699, causal 2860 / 3710, D 64 S
-- 4k 5142 / 6751, D 256 S 4k causal 6552 / 8132 (FFMA: 6959, 4011, 8515,
-- 10838).

-- Hopper path: nwg consumer warpgroups of 64 query rows each (plus the
-- producer warpgroup), bn keys per tile (two stages each of K and V in shared
-- memory). Measured on the H200 (bf16, B x S = 32768, H = 16, TFLOP/s at
-- S = 1k / 4k / 16k, not causal): D=128 with bn 128: 407 / 446 / 460; bn 176:
-- 353 / 391 / 414. D=64: bn 128: 292 / 336 / 354; bn 64: 297 / 338 / 353;
-- bn 192: 274 / 356 / 383 (1024 is no multiple of 192); 3 consumer
-- warpgroups (152 registers each): 293 / 343 / 356. Before warp
-- specialization (2 warpgroups loading and multiplying in lockstep with
-- __syncthreads): D=128 374 / 412 / 425, D=64 261 / 291 / 298.
-- Loads: bulk tensor copies (TMA) by one producer thread where the runtime
-- could encode the tensor maps, else cp.async by the producer warpgroup (the
-- same bytes, bitwise the same results). Session 9, H200, r1, us, bf16, TMA /
-- cp.async back to back: D 64 S 1k persistent 364.8 / 392.3, D 128 S 1k
-- 488.5 / 545.3, D 128 S 4k 1897.7 / 2064.5, D 96 S 4k 777.2 / 956.3, D 256
-- S 4k causal 441.4 / 468.1; decode B 32 Hq 32 Hkv 32 Sk 4k 476.7 / 516.3.
M.sm90 = {
  [32] = { nwg = 2, bn = 128 },
  [64] = { nwg = 2, bn = 128 },
  [96] = { nwg = 2, bn = 128 },
  [128] = { nwg = 2, bn = 128 },
  [256] = { nwg = 2, bn = 64 },
}
-- Persistent Hopper variants (PERSIST: one block per multiprocessor takes
-- work tiles in turn; the producer loads the next tile's Q, K and V while
-- the consumers finish the last; the output staged in its own tile), alone
-- and with the ping-pong turns: D 64 to 128 (D 256's output staging tile
-- does not fit in shared memory; D 32 spilled in the producer of these
-- two-warpgroup tiles: it takes the plain kernel's three, below). H200, bf16,
-- us, grid-mode default / persistent / persistent pp: D 64 S 1k 456 / 429 /
-- 436, causal 305 / 288 / 277; D 128 S 1k 690 / 679 / 679, causal 445 / 433
-- / 423; D 128 S 13.5k causal 1690 / 1929 / 1916 (runtime/attention.c takes
-- them for short key ranges only).
M.sm90_persist = { [64] = { nwg = 2, bn = 128 }, [96] = { nwg = 2, bn = 128 }, [128] = { nwg = 2, bn = 128 } }
-- The ping-pong kernels generated (session 24, for the bundle's size): the
-- grid kernel ("Hopper pp") at D 64, the runtime's choice there below
-- KG_ATTN_LONG_KEYS keys (and with a mask), and at D 96 / 128 causal, the
-- grid twins of the persistent pp defaults (the tests compare their bits:
-- the ping-pong kernels do not fold the softmax scale, so no other kernel
-- gives their bits); the persistent kernel ("Hopper persistent pp") at D 96
-- / 128 causal, the runtime's choice there up to 4096 keys. The others
-- (grid pp at D 32, 256 and D 96 / 128 not causal or masked; persistent pp
-- at D 64 and not causal) no runtime plan took since sessions 6-17
-- (runtime/attention.c): forced only until session 24, removed.
M.sm90_pp = { [64] = M.sm90[64], [96] = M.sm90[96], [128] = M.sm90[128] }
M.sm90_pp_kinds = { [64] = { none = true, causal = true, mask = true }, [96] = { causal = true },
                    [128] = { causal = true } }
M.sm90_persist_pp = { [96] = M.sm90_persist[96], [128] = M.sm90_persist[128] }
-- The plain persistent variant (not the ping-pong one) at D 64: three
-- stages of each of the K and V rings (ks), and no proxy fence before the
-- consumers' products where the tiles came by TMA (nf). H200, session 15
-- r1, us, in turn, best of 3, three passes, two stages and the fence /
-- three stages without (session 14's candidate k3nf): bf16 S 1k 357.7 /
-- 346.7, 357.3 / 346.6, 357.9 / 347.1; causal 247.7 / 241.4, 247.1 / 241.7,
-- 246.0 / 240.7; f16 S 1k 361.8 / 350.8, 360.1 / 350.3, 362.1 / 351.9;
-- causal 248.1 / 242.9, 246.0 / 243.5, 248.7 / 243.3. Each alone was
-- smaller (three stages: bf16 causal 241.6, 241.6, 240.9; no fence: 244.6,
-- 243.7, 243.8); neither helps the 192-key tiles at S 4k causal (k3nf
-- 688.2-690.4 against the persistent long default's 666.7-671.3; s14r2:
-- three stages there 683.4 against 665.6) nor the fence D 128 (s14r2, S 1k:
-- 512.8 against 453.9).
-- Since session 15 r2 at D 64 also: three consumer warpgroups (192-row
-- tiles, nwg), the warps' own output stores (ws), the work tiles'
-- coordinates published by the producer (pc) and, causal, the query blocks
-- shifted so that the partial one is the first (sh). H200, s15r2, us, in
-- turn, best of 3, the k3nf default / ws / wc (ws + pc) / w3 (wc, 3
-- warpgroups) / w3s (w3 + sh): bf16 S 1k 353.8 / 353.3 / 348.9 / 328.1 /
-- 330.9, causal 241.3 / 238.1 / 229.9 / 255.5 / 228.9; f16 S 1k 351.4 /
-- 351.8 / 347.2 / 326.8 / 332.9, causal 241.9 / 242.7 / 234.0 / 259.5 /
-- 231.7; bf16 S 4k causal, the persistent long default 670.1, w3 640.3,
-- w3s 627.7 (runtime/attention.c takes it there). The pipeline across work
-- tiles was slower on both (wcx: 357.4, 235.2, S 4k causal 692.1; w3x:
-- 333.8, 258.2, 661.4), and so were ws / wc at D 128 (S 1k 490.3 / 514.3
-- against 475.4; causal, against the ping-pong default's 315.8: 324.8 /
-- 311.7, wc on the ping-pong kernel 343.1) and on the 192-key kernel (S 4k
-- causal 697.5 against 670.1).
-- Since session 16 also D 32 on D 64's kernel (the grid kernel before;
-- H200, s16r2, us, in turn, best of 3, bf16 S 4k: 1173.9 / 949.3; 32
-- producer registers, no spills), and the runtime takes both at every key
-- count (D 64 from 2048 keys: the persistent long kernel before; bf16 S 4k
-- 1181.9 / 1110.7, S 16k 4629.6 / 4259.6, causal 2379.9 / 2254.3, GQA Hq
-- 32 S 15901 4289.9 / 4164.2, Hkv 8 S 12796 2801.6 / 2685.5).
-- Measured and dropped (s16r1, s16r2, us, in turn, best of 3, default /
-- candidate): each consumer warpgroup multiplying only the key tiles its
-- own rows see under the causal rule (bf16 D 64 S 1k causal 230.0 / 229.9,
-- S 4k 614.9 / 677.6; f16 S 1k 227.0 / 239.7), or nothing for rows
-- outside the queries (bf16 S 1k 326.4 / 339.8, causal 226.7 / 240.3, S 4k
-- 1110.7 (this kernel) / 1229.0); half-width products and softmax on the
-- causal diagonal tiles where a warpgroup's rows see only their first half
-- (D 64 S 1k causal 226.7 / 271.2, D 128 S 1k causal, ping-pong 314.1 /
-- 431.2, S 16k 3583.8 / 4966.3): the products under those uniform
-- branches cost more than the work they save.
-- Since session 21 the D 32 / 64 kernel also deals, not causal, the key
-- tiles of a work tile whose real rows all lie in the first warpgroup's 64
-- round the three warpgroups (sk; S 1k, 4k, 16k end on such a block), and,
-- causal, runs each work tile's epilogue under the next tile's first Q K^T
-- (ep; the same bits). H200, us, in turn, best of 3, s21r1: main's kernel
-- / ep / sk forced: bf16 D 64 S 1k 326.2 / 324.2 / 317.8, causal 228.5 /
-- 223.9, S 4k 1137.6 / 1139.1 / 1124.4, causal 615.1 / 593.9, S 16k
-- 4331.0 / 4296.1 / 4269.2, causal 2315.5 / 2215.5; f16 D 64 S 1k 323.6 /
-- 324.4 / 317.4, causal 236.8 / 232.8; bf16 D 32 S 4k 949.7 / 987.1 /
-- 934.8 (ep not where not causal). s21r2, the new default (sk, ep at D 64
-- causal) / ep everywhere / main's kernel ("Hopper persistent base"): bf16
-- D 64 S 1k 319.4 / 326.0 / 326.9, causal 223.4 / 227.1 / 233.4, S 4k
-- 1097.2 / 1134.6 / 1138.2, causal 599.3 / 598.3 / 616.1, S 16k 4202.6 /
-- 4255.0 / 4284.4, causal 2195.8 / 2205.5 / 2291.7; f16 D 64 S 1k 320.9 /
-- 328.0 / 333.7, causal 229.6 / 229.9 / 239.6; bf16 D 32 S 4k 937.3 /
-- 986.9 / 951.2, causal 534.0 / 525.2 / 534.3 (so ep at D 32 causal too).
-- s21r3, this default / base: bf16 D 64 S 1k 316.7 / 323.3, causal 221.5 /
-- 227.0, S 4k 1120.4 / 1147.3, causal 588.7 / 618.2, S 16k 4233.1 /
-- 4302.5, causal 2234.4 / 2302.2; f16 S 1k causal 233.6 / 243.7; D 32 S 4k
-- 936.9 / 951.7, causal 528.2 / 536.4; GQA Hq 32 Hkv 8 S 4k causal 587.7 /
-- 635.4.
-- Dropped: ep on the two-warpgroup D 128 persistent kernel (s21r2, default
-- / ep: bf16 D 128 S 1k 452.8 / 511.4, causal 309.8 / 317.8).
M.sm90_persist_plain = {
  [32] = { nwg = 3, bn = 128, ks = 3, nf = true, ws = true, pc = true, sh = "causal", ep = "causal", sk = "none" },
  [64] = { nwg = 3, bn = 128, ks = 3, nf = true, ws = true, pc = true, sh = "causal", ep = "causal", sk = "none" },
  [96] = M.sm90_persist[96],
  [128] = M.sm90_persist[128],
}
-- Forced only (session 21): "base", the D 32 / 64 kernel as before session
-- 21, the same-process twin for comparisons and the bits tests. Since
-- session 37 generated for no dtype (its modules attn90b_f16 / attn90b_bf16,
-- 64,808 bytes, made room in the bundle for new kernels; no default plan
-- took it): the variant's enum and this configuration stay, its table
-- entries are empty, so a force of it does not take (runtime/attention.c's
-- has_variant) and the runtime plans as without the force.
M.sm90_persist_base = {
  [32] = { nwg = 3, bn = 128, ks = 3, nf = true, ws = true, pc = true, sh = "causal" },
  [64] = { nwg = 3, bn = 128, ks = 3, nf = true, ws = true, pc = true, sh = "causal" },
}
-- "f2" (session 22): the two-warpgroup D 128 persistent kernel
-- issuing a tile's first two Q K^T together, the first softmax under the
-- second (attention_sm90.cuh, F2; the same bits). H200, s22r1, us, in
-- turn, best of 3, the plain persistent default / f2: bf16 D 128 S 1k
-- 470.8 / 463.4, S 4k 1862.9 / 1824.9, f16 S 4k 1922.8 / 1883.7, GQA Hq 32
-- Hkv 8 S 10297 causal 1549.2 / 1519.6; but S 1k causal bf16 313.9 /
-- 315.6, f16 323.5 / 332.3 (runtime/attention.c takes it where it won).
-- s22r2, as the default there, main's plain kernel / f2: bf16 S 1k 454.9 /
-- 446.6, S 4k 1817.2 / 1780.8, S 16k causal 3646.1 / 3611.1; f16 S 1k
-- 495.7 / 457.8, S 4k 1877.3 / 1832.2, S 16k causal 3789.3 / 3720.9; GQA S
-- 10297 causal 1507.6 / 1484.9; s22r3 the same way: bf16 S 1k 456.8 /
-- 450.7, S 4k 1804.2 / 1766.8, S 16k causal 3631.9 / 3576.0, f16 S 1k
-- 470.2 / 459.9, S 4k 1872.1 / 1844.7, S 16k causal 3792.7 / 3746.9, GQA
-- 1503.7 / 1458.8. Not at D 96 (s22r2, bf16 S 4k: 753.5 / 1112.8).
-- Measured and dropped there (s22r1, default / candidate), on the D 32 / 64
-- causal kernel: "k4", four K / V stages: bf16 D 64 S 1k causal 223.3 /
-- 223.2, S 4k 594.7 / 605.9, S 16k 2159.7 / 2241.8, GQA Hq 32 Hkv 8 S 4k
-- 588.8 / 617.3, f16 S 1k 224.7 / 225.0, D 32 S 4k 527.0 / 525.5; "e2",
-- at an ep boundary the next tile's second Q K^T under its first softmax
-- (ptxas: 48 bytes of stack at D 64, 384 at D 32): bf16 D 64 S 1k causal
-- 274.8, S 4k 750.4, S 16k 2733.7, f16 S 1k 283.9 (23-27% slower).
M.sm90_persist_f2 = { [128] = { nwg = 2, bn = 128, f2 = true } }
-- "ts" (session 31; the runtime's choice since session 32, after round
-- s31r1 on an NVIDIA H100 80GB HBM3): the plain D 128 persistent kernel's
-- causal launches (up to 2048 keys, where it is the default) with each
-- warpgroup's staged output rows stored by bulk tensor copies
-- (attention_sm90.cuh TS; the output's tensor map two more kernel
-- arguments): one thread's two bulk copies instead of every thread's eight
-- 16-byte shared loads and global stores and a second barrier, and the
-- warpgroup goes on to its next tile without waiting for them. The same
-- bits. s31r1, us, in turn, best of 3, default / ts: bf16 B 32 H 16 S 1k
-- causal 309.0 / 300.9, f16 318.5 / 310.8, bf16 B 4 47.7 / 45.8, B 16 S 2k
-- 519.5 / 507.2, B 64 S 512 229.9 / 221.8 (short causal geomean 1.031,
-- min 1.024); seeded causal rows 1.009-1.027 (geomean 1.018). Not causal
-- (on f2) it lost the round's rule: short geomean 1.007 with f16 B 8 S 2k
-- 438.7 / 472.2 (0.929), seeded bf16 B 8 Hq 32 Hkv 8 S 1910 740.4 / 812.4
-- (0.911), so it is generated causal only. (Session 24's ts also had a D
-- 64 three-warpgroup form, which stopped with an illegal instruction at
-- D 64 causal in s25r1. Session 31's "tw", the same stores per warp (lane
-- 0, boxes of 16 rows, no warpgroup barrier) on the D 64 and D 128
-- defaults, passed its tests in s31r1 but lost everywhere: D 128 short
-- causal geomean 0.972, not causal 0.915 (worst 0.829), D 64 0.878-0.935
-- on every row; removed.)
M.sm90_persist_ts = { [128] = { nwg = 2, bn = 128, ts = true } }
-- f2 on the D 256 grid kernel, not causal (session 22; the runtime's
-- choice there): H200, s22r2, us, in turn, best of 3, grid / f2: f16 B 5
-- Hq 32 Hkv 4 S 1632 686.1 / 675.6; s22r3, as the default: 754.5 /
-- 712.9, bf16 B 2 H 16 S 4k 860.1 / 800.0. Causal it lost (ptxas spills 24
-- bytes; bf16 B 2 H 16 S 4k 417.7 / 466.8, B 6 Hq 32 Hkv 4 S 2140 774.2 /
-- 883.7), and with a mask it spills 392 bytes.
M.sm90_f2 = { [256] = { nwg = 2, bn = 64, f2 = true } }
-- Measured and dropped (session 18, H200, us, in turn, best of 3, default
-- / candidates, each the D 32 / 64 kernel above with one change):
-- s18r1, "ex4" / "ex8": every 4th / 8th 8-key group's exp2 on the FMA pipe
-- (a degree-4 polynomial, 2^j built in the exponent bits) instead of
-- MUFU.EX2: bf16 D 64 S 1k 324.2 / 368.0 / 346.8, causal 228.0 / 258.7 /
-- 245.4, S 4k causal 613.5 / 718.1 / 676.0, S 16k 4389.7 / 4935.7 /
-- 4679.9; f16 S 1k causal 227.1 / 268.2 / 253.3; bf16 D 32 S 4k 958.9 /
-- 1117.6 / 1041.4 (ncu of the default, bf16 D 64 S 1k causal: tensor pipe
-- 39% and MUFU 41% of peak, issue 48%: latency-bound, not MUFU-bound).
-- s18r2, "t3" / "t3k4": the ping-pong turns going round the three consumer
-- warpgroups (t3k4: and four K/V stages; 12 / 24 bytes of spills at D 64
-- causal): bf16 D 64 S 1k 324.1 / 368.4 / 371.2, causal 228.6 / 252.1 /
-- 257.2, S 4k causal 611.0 / 659.8 / 665.6, S 16k causal 2298.4 / 2455.1 /
-- 2442.2; f16 S 1k 325.5 / 378.1 / 381.3, causal 228.0 / 264.5 / 269.0;
-- bf16 D 32 S 4k 951.8 / 1041.0 / 1055.1.
-- Mixed, not adopted (s18r2, one run; its forced GPU tests passed): "fe",
-- the epilogue's 1 / sum and the lse's log2 by rcp.approx / lg2.approx
-- (one MUFU each, no IEEE slow-path check): bf16 D 64 S 1k 324.1 / 319.1,
-- causal 228.6 / 220.1, S 4k causal 611.0 / 618.3, S 16k causal 2298.4 /
-- 2283.1; f16 S 1k 325.5 / 333.5, causal 228.0 / 224.7; bf16 D 32 S 4k
-- 951.8 / 943.5 (to ship it, every Hopper kernel's epilogue would take it,
-- so that the persistent kernels keep grid mode's bits).
-- (The persistent kernel on the long variant's tiles, D 64 with 192 keys,
-- the default from 2048 keys until session 16 and forced only since, left
-- in session 17.)
-- Measured and dropped (session 17, s17r1, H200, us, in turn, best of 3,
-- default / the same three-warpgroup persistent kernel on 64-key tiles at
-- D 64-128, "n64"): bf16 D 64 S 1k 324.7 / 388.8, causal 229.2 / 245.3, S
-- 4k causal 610.9 / 732.5; D 128 S 1k 459.3 / 601.9, causal (ping-pong
-- default) 316.8 / 366.1, S 4k causal 1042.4 / 1109.3, GQA Hq 32 Hkv 8
-- 1014.6 / 1099.8; f16 D 64 S 1k causal 230.7 / 251.8.
-- And (s17r3, same way, default / "xt": the D 32 / 64 kernel above with
-- the consumers' pipeline across work tiles and the shifted causal blocks;
-- 24 / 8 bytes of spills at D 64 causal / none): bf16 D 64 S 1k 326.8 /
-- 346.4, causal 228.0 / 238.9, S 4k causal 611.5 / 652.8, S 16k causal
-- 2265.1 / 2313.2; f16 D 64 S 1k causal 226.0 / 243.2; bf16 D 32 S 4k
-- 952.8 / 962.2 (its forced GPU tests passed).
-- D 32 and 96 (H200, bf16, S 4096, not causal): D 32 B 8 H 16: Hopper 1240 us
-- with 128 keys per tile, 1276 with 192, portable mma.sync 1621; D 96 B 4 H 16:
-- Hopper 1101 us, portable 1718.
-- The long-key Hopper variant: 192 keys per tile at D=64, where it is faster
-- once the keys fill several tiles (above); the runtime takes it from
-- M.long_keys keys on. Not for the mask kind: with the mask's addresses it
-- spills (380 bytes).
M.sm90_long = { [64] = { nwg = 2, bn = 192 } }
M.long_keys = 2048

-- Short-query (decode) path, templates/attention_decode.cuh: 4 warps, MT x 16
-- packed query rows (the heads of a KV group times Sq), bn keys per tile
-- (bn / 4 per warp), nst pipeline stages of K and V. Three variants: 16 rows
-- and 32 rows (not at D=256: 256 accumulators a thread), every warp all rows
-- and a quarter of the keys; 64 rows, each warp 16 rows and all the keys
-- (D <= 128: at D=256 it needs 255 registers and spills).
-- The merge of splits needs 256 (most splits) x rows floats.
M.dec = {
  [32] = { bn = 128, nst = 3 },
  [64] = { bn = 128, nst = 3 },
  [96] = { bn = 64, nst = 3 },
  [128] = { bn = 64, nst = 3 },
  [256] = { bn = 64, nst = 3 },
}
M.dec_max_mt = { [32] = 2, [64] = 2, [96] = 2, [128] = 2, [256] = 1 }

-- The Hopper path's shared-memory width of a head dim: whole 64-element
-- (128-byte swizzle) panels; D 32 and 96 leave half a panel unused and run
-- the P V product N = 64 / 128 wide (attention_sm90.cuh).
function M.panel_dim(d) return (d + 63) // 64 * 64 end

local sm90_dtypes = { "f16", "bf16" }

local function plan_f32(d, kind, c)
  local p = d + 4
  -- Q, K, V and (unless P overwrites K) P
  local smem = (c.bm * p + 2 * c.bn * p + (c.pk and 0 or c.bm * (c.bn + 4))) * 4
  return { threads = 256, minb = 1, bm = c.bm, smem = smem,
           call = string.format("attn_f32<%d, %d, %d, %s, %s>", d, c.bm, c.bn, tostring(c.pk or false),
                                kind_enum[kind]),
           shape = string.format("%dx%d tiles%s, FFMA", c.bm, c.bn, c.pk and ", P over K" or "") }
end

local function plan_x3(dt, d, kind)
  if dt.name ~= "f32" then return nil end
  local c = M.x3[d]
  local bm = c.nw * 16
  return { threads = c.nw * 32, minb = c.minb, bm = bm, smem = (bm + 2 * c.bn) * (d + 4) * 4,
           call = string.format("attn_x3<%d, %d, %d, %s>", d, c.nw, c.bn, kind_enum[kind]),
           shape = string.format("%dx%d tiles, %d warps, 3xTF32 mma.sync", bm, c.bn, c.nw) }
end

local function plan_narrow(dt, d, kind)
  if dt.name == "f32" then return plan_f32(d, kind, M.f32_narrow) end
end

local function plan(dt, d, kind)
  local c = M.tc[d]
  local bm, p = c.nw * c.mt * 16, d + 8
  return { threads = c.nw * 32, minb = c.minb or 1, bm = bm, smem = (bm + 2 * c.bn) * p * 2,
           call = string.format("attn_tc<%s, %d, %d, %d, %d, %s, %s>", dt.storage, d, c.nw, c.mt, c.bn,
                                tostring(c.qreg), kind_enum[kind]),
           shape = string.format("%dx%d tiles, %d warps, mma.sync", bm, c.bn, c.nw) }
end

-- The tiles' ks: the stages of each K / V ring (2 unless set); nf, ws, pc,
-- sh (persistent only; sh true or a mask kind): no proxy fence before the
-- products of tiles that came by TMA (attention_sm90.cuh, NF), the warps'
-- own output stores (WS), the work tiles' coordinates published by the
-- producer (PC), the query blocks shifted (SH)
local function plan_sm90(dt, d, kind, tiles, pp, persist)
  local c = (tiles or M.sm90)[d]
  if not c then return nil end
  local nf, bm, ks = c.nf, c.nwg * 64, c.ks or 2
  local sh = c.sh == true or c.sh == kind
  -- (ep, sk: true, or the one kind they apply to)
  local ep, sk = c.ep == true or c.ep == kind, c.sk == true or c.sk == kind
  local f2 = c.f2 == true or c.f2 == kind
  local ts = c.ts == true or c.ts == kind
  -- nwg consumer warpgroups and a producer one; Q, ks (two) stages of K
  -- and of V (D padded to whole 64-element panels), 4 ks mbarriers, and 1
  -- KB to align the swizzled tiles; persistent: also the output's staging
  -- tile, a second Q stage, 6 more mbarriers and the two Q stages' work
  -- tile words
  local smem = (bm + 2 * ks * c.bn) * M.panel_dim(d) * 2 + 32 * ks + 1024
  -- (PC: each Q stage's work tile word is four words)
  if persist then smem = smem + 2 * bm * M.panel_dim(d) * 2 + 48 + (c.pc and 32 or 8) end
  -- (SK: the merge's scratch, nwg - 1 warpgroups' states of D / 2 + 4
  -- floats a thread, from a 16-byte boundary)
  if sk then smem = smem + (c.nwg - 1) * 128 * (M.panel_dim(d) // 2 + 4) * 4 + 16 end
  -- the template's trailing arguments, defaults left out
  local args = { tostring(pp or false), tostring(persist or false), tostring(nf or false), tostring(ks),
                 tostring(c.ws or false), tostring(c.pc or false), tostring(sh), tostring(ep),
                 tostring(sk), tostring(f2), tostring(ts) }
  local dflt = { "false", "false", "false", "2", "false", "false", "false", "false", "false", "false", "false" }
  local n = #args
  while n > 0 and args[n] == dflt[n] do n = n - 1 end
  local flags = n > 0 and ", " .. table.concat(args, ", ", 1, n) or ""
  -- (ts: the output's tensor map too, and whether the runtime set it)
  return { threads = (c.nwg + 1) * 128, minb = 1, bm = bm, bn = c.bn, smem = smem, tmaps = true, tmo = ts,
           call = string.format("attn_wg<%s, %d, %d, %d, %s%s>", dt.storage, d, c.nwg, c.bn, kind_enum[kind], flags),
           shape = string.format("%dx%d tiles, %d+1 warpgroups, wgmma%s%s%s%s%s%s%s%s%s%s%s", bm, c.bn, c.nwg,
                                 pp and ", ping-pong" or "", persist and ", persistent" or "",
                                 nf and ", no proxy fence" or "", ks ~= 2 and string.format(", %d K/V stages", ks) or "",
                                 c.ws and ", warp stores" or "", c.pc and ", published coordinates" or "",
                                 sh and ", shifted blocks" or "", ep and ", epilogue under the next product" or "",
                                 sk and ", dealt key tiles on short blocks" or "",
                                 f2 and ", the second product under the first softmax" or "",
                                 ts and ", bulk tensor stores" or "") }
end

local function plan_dec(mt, wr)
  return function(dt, d, kind)
    if dt.name == "f32" or mt > M.dec_max_mt[d] or (wr > 1 and d > 128) then return nil end
    local c = M.dec[d]
    local r, pd, nw = wr * mt * 16, d + 8, 4 // wr
    -- Q in rows of D + 8; K and V in rows of D + 8 (D 32), or (D from 64)
    -- in 128-byte-swizzled panels (D 96: two) from a 1024-byte boundary
    -- (attention_decode.cuh, dec_kv_pitch)
    local pipe = (r * pd + c.nst * 2 * c.bn * pd) * 2
    if d >= 64 then pipe = r * pd * 2 + 1024 + c.nst * 2 * c.bn * M.panel_dim(d) * 2 end
    local merge = math.max((nw * r * 2 + nw * r * (d + 8)) * 4, 256 * r * 4)
    return { threads = 128, minb = 1, bm = r, bn = c.bn, smem = math.max(pipe, merge), tmaps = true,
             call = string.format("attn_dec<%s, %d, %d, %d, %d, %d, %s>", dt.storage, d, mt, wr, c.bn, c.nst,
                                  kind_enum[kind]),
             shape = string.format("%d packed rows x %d keys, %d stages, split keys, mma.sync", r, c.bn, c.nst) }
  end
end

-- The kernel variants, in the order of kg_attn_variant (kg_attn_table.h):
-- one module per dtype each, prefix .. dtype. sm90a: built for sm_90a alone
-- (build.ninja's fatbin90 rule), so it runs on compute capability 9.0 only.
local variants = {
  { enum = "KG_ATTN_V_PORTABLE", name = "portable", prefix = "attn_", dtypes = sm90_dtypes, plan = plan,
    include = "attention.cuh", what = "portable path (mma.sync)" },
  { enum = "KG_ATTN_V_NARROW", name = "narrow", prefix = "attn_narrow_", dtypes = { "f32" }, plan = plan_narrow,
    include = "attention.cuh", what = "portable path, narrow blocks for small problems (FFMA)" },
  { enum = "KG_ATTN_V_HOPPER", name = "Hopper", prefix = "attn90_", dtypes = sm90_dtypes, plan = plan_sm90,
    sm90a = true, include = "attention_sm90.cuh", what = "Hopper path (sm_90a, wgmma)" },
  { enum = "KG_ATTN_V_HOPPER_LONG", name = "Hopper long", prefix = "attn90l_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind) return kind ~= "mask" and plan_sm90(dt, d, kind, M.sm90_long) or nil end,
    sm90a = true, include = "attention_sm90.cuh", what = "Hopper path, more keys per tile for long sequences" },
  { enum = "KG_ATTN_V_DECODE", name = "decode", prefix = "attn_dec_", dtypes = sm90_dtypes, plan = plan_dec(1, 1),
    combine = true,
    include = "attention_decode.cuh", what = "short queries: 16 packed rows, split keys (mma.sync)" },
  { enum = "KG_ATTN_V_DECODE2", name = "decode 32", prefix = "attn_dec2_", dtypes = sm90_dtypes, plan = plan_dec(2, 1),
    include = "attention_decode.cuh", what = "short queries: 32 packed rows, split keys (mma.sync)" },
  { enum = "KG_ATTN_V_DECODE4", name = "decode 64", prefix = "attn_dec4_", dtypes = sm90_dtypes, plan = plan_dec(1, 4),
    include = "attention_decode.cuh", what = "short queries: 64 packed rows, a warp's 16 rows each (mma.sync)" },
  { enum = "KG_ATTN_V_HOPPER_PP", name = "Hopper pp", prefix = "attn90p_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind)
      return M.sm90_pp_kinds[d] and M.sm90_pp_kinds[d][kind] and plan_sm90(dt, d, kind, M.sm90_pp, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh", what = "Hopper path, the consumer warpgroups' products in turns" },
  { enum = "KG_ATTN_V_HOPPER_PERSIST", name = "Hopper persistent", prefix = "attn90q_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind)
      return kind ~= "mask" and plan_sm90(dt, d, kind, M.sm90_persist_plain, false, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh", what = "Hopper path, persistent (a block per multiprocessor)" },
  { enum = "KG_ATTN_V_HOPPER_PERSIST_PP", name = "Hopper persistent pp", prefix = "attn90r_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind)
      return kind == "causal" and plan_sm90(dt, d, kind, M.sm90_persist_pp, true, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh", what = "Hopper persistent with the ping-pong turns" },
  -- (no dtypes since session 37: no modules; M.sm90_persist_base above)
  { enum = "KG_ATTN_V_HOPPER_PERSIST_BASE", name = "Hopper persistent base", prefix = "attn90b_", dtypes = {},
    plan = function(dt, d, kind)
      return kind ~= "mask" and plan_sm90(dt, d, kind, M.sm90_persist_base, false, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh",
    what = "Hopper persistent as before session 21 (D 32, 64); no kernels since session 37" },
  { enum = "KG_ATTN_V_HOPPER_PERSIST_F2", name = "Hopper persistent f2", prefix = "attn90f_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind)
      return kind ~= "mask" and plan_sm90(dt, d, kind, M.sm90_persist_f2, false, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh",
    what = "Hopper persistent, a tile's second product under its first softmax (D 128)" },
  { enum = "KG_ATTN_V_HOPPER_F2", name = "Hopper f2", prefix = "attn90g_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind) return kind == "none" and plan_sm90(dt, d, kind, M.sm90_f2) or nil end,
    sm90a = true, include = "attention_sm90.cuh",
    what = "Hopper grid, a tile's second product under its first softmax (D 256, not causal)" },
  { enum = "KG_ATTN_V_X3", name = "f32 3xTF32", prefix = "attn_x3_", dtypes = { "f32" }, plan = plan_x3,
    include = "attention_x3.cuh", what = "f32 on tensor cores, split TF32 (mma.sync m16n8k8)" },
  { enum = "KG_ATTN_V_HOPPER_PERSIST_TS", name = "Hopper persistent ts", prefix = "attn90x_", dtypes = sm90_dtypes,
    plan = function(dt, d, kind)
      return kind == "causal" and plan_sm90(dt, d, kind, M.sm90_persist_ts, false, true) or nil
    end,
    sm90a = true, include = "attention_sm90.cuh",
    what = "Hopper persistent D 128 causal (the default up to 2048 keys), the output by bulk tensor stores" },
}

-- One module per dtype of a variant; returns the table rows (and appends
-- the combine kernels' rows to `comb`).
local function path_modules(G, by, path, comb)
  local rows = {}
  for _, name in ipairs(path.dtypes) do
    local dt = by[name]
    local module = G:module(path.prefix .. name, { sm90a = path.sm90a })
    local kernels = {}
    for di, d in ipairs(M.dims) do
      for _, kind in ipairs(M.kinds) do
        local pl = path.plan(dt, d, kind)
        if pl then
          local kname = string.format("kg_%s%s_d%d_%s", path.prefix, name, d, kind)
          local desc = string.format("attention %s D=%d %s (%s)", name, d, kind, pl.shape)
          local idx = G:kernel({ name = kname, module = module, vec = 1, desc = desc })
          kernels[#kernels + 1] = { name = kname, threads = pl.threads, minb = pl.minb, call = pl.call, desc = desc,
                                    params = pl.tmo and ", const __grid_constant__ kg_attn_tmaps tm, const "
                                      .. "__grid_constant__ kg_attn_tmap tmo, int tmo_on"
                                      or pl.tmaps and ", const __grid_constant__ kg_attn_tmaps tm" or "",
                                    args = pl.tmo and ", tm, tmo_on ? &tmo : nullptr" or pl.tmaps and ", tm" or "" }
          rows[#rows + 1] = string.format("    [%s][%s][%d][%s] = {%d, %d, %d, %d, %d},\n", path.enum, dt.enum,
                                          di - 1, kind_enum[kind], idx, pl.threads, pl.bm, pl.smem, pl.bn or 0)
        end
      end
      if path.combine then
        -- the split merge as its own grid (attention_decode.cuh, attn_dec_combine)
        local kname = string.format("kg_%s%s_d%d_combine", path.prefix, name, d)
        local desc = string.format("attention decode D=%d: merge of the key splits", d)
        local idx = G:kernel({ name = kname, module = module, vec = 1, desc = desc })
        kernels[#kernels + 1] = { name = kname, threads = 128, minb = 1, desc = desc, params = "", args = "",
                                  call = string.format("attn_dec_combine<%s, %d, 128>", dt.storage, d) }
        comb[#comb + 1] = string.format("    [%s][%d] = %d,\n", dt.enum, di - 1, idx + 1)
      end
    end
    G:write(path.prefix .. name .. ".cu", G:render("attention.cu", {
      header = G.header("templates/attention.cu and gen/attention.lua"),
      dtype = dt, dims = M.dims, kinds = M.kinds, kernels = kernels, path = path.what, include = path.include,
    }))
  end
  return rows
end

function M.generate(G)
  G:dep(G.root .. "/templates/attention.cu")
  G:dep(G.root .. "/gen/wgmma.lua")
  local by = require("common").by_name(G.dtypes)
  G:dep(G.root .. "/templates/attention_decode.cuh")
  local rows, enums, names, sm90a, comb = {}, {}, {}, {}, {}
  for _, v in ipairs(variants) do
    enums[#enums + 1] = "    " .. v.enum .. ", /* " .. v.what .. " */\n"
    names[#names + 1] = '"' .. v.name .. '"'
    sm90a[#sm90a + 1] = v.sm90a and "1" or "0"
    for _, r in ipairs(path_modules(G, by, v, comb)) do rows[#rows + 1] = r end
  end
  local ns = {}
  for _, t in ipairs({ M.sm90, M.sm90_long }) do
    for d, c in pairs(t) do ns[#ns + 1] = M.panel_dim(d); ns[#ns + 1] = c.bn end
  end
  G:write("kg_wgmma.cuh", require("wgmma").header(G, ns))
  local dims = {}
  local decbn = {}
  for i, d in ipairs(M.dims) do dims[i] = tostring(d); decbn[i] = tostring(M.dec[d].bn) end
  G:write("kg_attn_table.h", G.header("gen/attention.lua") .. string.format([[
#ifndef KG_ATTN_TABLE_H
#define KG_ATTN_TABLE_H

#include "kg_attention.h"
#include "attention_params.h"

#define KG_ATTN_DIM_COUNT %d
/* The generated head dims, in slot order, and as text for messages. */
extern const int kg_attn_dims[KG_ATTN_DIM_COUNT];
#define KG_ATTN_DIMS_TEXT "%s"
#define KG_ATTN_LONG_KEYS %d
/* The decode variants' keys per tile, by head dim slot. */
extern const int kg_attn_dec_bn[KG_ATTN_DIM_COUNT];

/* Kernel variants. Portable: f16 and bf16, every head dim and kind, for
   every arch of the bundle. f32 3xTF32: f32 (split TF32), every arch.
   Narrow: f32 in small blocks where the 3xTF32 grid would leave
   multiprocessors idle. Hopper: sm_90a machine code only (compute capability
   9.0 devices); Hopper long: the same with more keys per tile, for
   KG_ATTN_LONG_KEYS keys or more. */
typedef enum kg_attn_variant {
%s    KG_ATTN_V_COUNT
} kg_attn_variant;

/* Each variant's name, for messages, and 1 where it is sm_90a machine code
   alone (it runs on compute capability 9.0 only). */
extern const char *const kg_attn_variant_names[KG_ATTN_V_COUNT];
extern const unsigned char kg_attn_variant_sm90a[KG_ATTN_V_COUNT];

typedef struct kg_attn_entry {
    int16_t kernel;  /* index into kg_kernels; 0 with threads 0: not generated */
    int16_t threads; /* block size */
    int16_t bm;      /* query rows per block */
    int32_t smem;    /* dynamic shared memory, bytes */
    int16_t bn;      /* Hopper path: keys per tile (the K / V tensor maps' box rows); 0 elsewhere */
} kg_attn_entry;

/* [variant][q dtype][head dim slot][kind]; threads == 0 where not generated. */
extern const kg_attn_entry kg_attn_table[KG_ATTN_V_COUNT][KG_DTYPE_COUNT][KG_ATTN_DIM_COUNT][KG_ATTN_KIND_COUNT];
/* The decode path's combine kernel (128 threads, no shared memory) by dtype
   and head dim slot: its kernel index + 1; 0 where not generated. */
extern const int16_t kg_attn_combine[KG_DTYPE_COUNT][KG_ATTN_DIM_COUNT];

#endif
]], #M.dims, table.concat(dims, ", "), M.long_keys, table.concat(enums)))
  G:write("kg_attn_table.c", G.header("gen/attention.lua") .. '#include "kg_attn_table.h"\n\n' ..
    "const int kg_attn_dims[KG_ATTN_DIM_COUNT] = {" .. table.concat(dims, ", ") .. "};\n" ..
    "const int kg_attn_dec_bn[KG_ATTN_DIM_COUNT] = {" .. table.concat(decbn, ", ") .. "};\n\n" ..
    "const char *const kg_attn_variant_names[KG_ATTN_V_COUNT] = {" .. table.concat(names, ", ") .. "};\n" ..
    "const unsigned char kg_attn_variant_sm90a[KG_ATTN_V_COUNT] = {" .. table.concat(sm90a, ", ") .. "};\n\n" ..
    "const kg_attn_entry kg_attn_table[KG_ATTN_V_COUNT][KG_DTYPE_COUNT][KG_ATTN_DIM_COUNT][KG_ATTN_KIND_COUNT] = {\n" ..
    table.concat(rows) .. "};\n\n" ..
    "const int16_t kg_attn_combine[KG_DTYPE_COUNT][KG_ATTN_DIM_COUNT] = {\n" .. table.concat(comb) .. "};\n")
end

return M
