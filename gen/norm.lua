-- norm.lua - the normalization family: every catalogue normalization
-- (M.norm: softmax, log_softmax, logsumexp, layer_norm, rms_norm) crossed
-- with the float dtypes and the kernel classes below.
--
-- Writes norm_<dtype>.cu (one module per dtype, from templates/norm.cu),
-- kg_norm_ops.h (the public op enum), kg_norm_table.c / .h (op x dtype x
-- class -> kernel index, and each op's rules for the runtime) and
-- kg_norm_reference.c / .h (the float64 CPU reference of one row, from the
-- same expressions).
local M = {}

-- Kernel classes, in the order of kg_norm_class in templates/norm_params.h.
M.classes = { "rows", "rows_res", "packed", "strided", "cols_stats", "cols_apply", "lean4", "lean8", "lean4_res",
               "lean8_res", "lean4l", "lean8l", "lean8c", "lean8s",
               "leanu4", "leanu8", "leanu4_res", "leanu4s", "leanu8s", "leanu4s_res", "lean4f", "lean8f",
               "lean4_resc", "leanw8", "leanw16", "leanw8_res", "colsv_stats8", "colsv_apply8",
               "lean4p", "lean8p", "lean16", "lean2", "lean2e", "lean2r" }

-- LEAN8 variants (templates/norm.cuh's KG_NX_* bits) of the norms:
-- class -> { nv, X bits, launch bound } for an op and dtype, or nil where
-- the variant is the base class's kernel (the class name without its last
-- letter). The planner takes them where they measured best (runtime/norm.c).
local NX = { NMOM = 1, OPQ = 2, NOCOPY = 4, OADDR = 8, CS = 16, RECOPY = 32, FTZ = 64, PF = 128, EXPS = 256 }
local vclasses = { lean8c = true, lean8s = true, lean4f = true, lean8f = true, lean4_resc = true, lean4p = true,
                   lean8p = true, lean16 = true, lean2 = true, lean2e = true, lean2r = true }
local vbase = { lean4p = "lean4", lean8p = "lean8", lean16 = "lean8" }
-- where a variant is not generated, the class whose kernel the table holds (else the name without its last letter)
local vfall = { lean2 = "lean4f", lean2e = "lean2", lean2r = "lean2" }
local function variant(c, op, dt)
  if c == "lean2" then
    -- the 2-byte rows of 32 elements at 2 lanes a row, blocks of 128 (the runtime's pair32): LEAN4's form (LEAN4F's
    -- for the lse ops) with 2 vectors a lane, in 32 registers (a 128-lane block, 16 a multiprocessor: every warp
    -- slot filled; LEAN4 / LEAN4F took 50-63, half the slots); rms_norm with its output and weight pointers opaque
    -- (without: ptxas spilled 12 bytes at 32 registers)
    if dt.size ~= 2 then return nil end
    local x = op.stats == "lse" and NX.FTZ or op.name == "rms_norm" and NX.OADDR or 0
    return { nv = 2, x = x, bound = "128, 16" }
  end
  if c == "lean2r" then
    -- LEAN2 with two rows a lane group at once (templates/norm.cuh's kg_norm_lean_r2: groups of 2 and 4 lanes as
    -- constants), LEAN2's X bits, in 40 registers (ptxas spilled 12-44 bytes at 32), layer_norm in 56 (4-12
    -- bytes spilled at 48)
    if dt.size ~= 2 then return nil end
    local x = op.stats == "lse" and NX.FTZ or op.name == "rms_norm" and NX.OADDR or 0
    return { nv = 2, x = x, bound = op.name == "layer_norm" and "128, 9" or "128, 12", fn = "kg_norm_lean_r2" }
  end
  if c == "lean2e" then
    -- LEAN2 of the 2-byte softmax with the sum's exps kept in f32 for the apply (half the exps, the same bits), its
    -- output and weight pointers opaque, in 40 registers (12 blocks a multiprocessor; ptxas spilled 40 bytes at 32
    -- registers, 4 at 40 without OADDR)
    if dt.size ~= 2 or op.name ~= "softmax" then return nil end
    return { nv = 2, x = NX.FTZ + NX.EXPS + NX.OADDR, bound = "128, 12" }
  end
  if c == "lean4f" or c == "lean8f" then
    -- the 2-byte lse ops: the statistics' exps by kg_nexp_sum (LEAN8F in 80 registers)
    if dt.size ~= 2 or op.stats ~= "lse" then return nil end
    if c == "lean4f" then return { nv = 4, x = NX.FTZ, bound = "KG_NORM_LEAN_MAX_T, 1" } end
    return { nv = 8, x = NX.FTZ, bound = "768, 1" }
  end
  if dt.name == "f64" or (op.name ~= "layer_norm" and op.name ~= "rms_norm") then return nil end
  if c == "lean16" then
    -- the 2-byte norms with 16 vectors a lane (a warp holds a row of 4096), as LEAN8S / LEAN8C (no streaming
    -- hints for rms_norm) in 128 registers (118-128 used; at 102 they spilled 60-296 bytes); elsewhere never
    -- planned (LEAN8's kernel)
    if dt.size ~= 2 then return nil end
    local x = op.name == "layer_norm" and NX.CS + NX.OPQ + NX.NOCOPY + NX.OADDR or NX.OPQ + NX.OADDR
    return { nv = 16, x = x, bound = "KG_NORM_MAX_GROUP, 1" }
  end
  if vbase[c] then
    -- PF: the next row prefetched: LEAN4P (a 768-lane bound; the 2-byte prefetch held as an opaque copy, 70
    -- registers) for the f32 norms and the 2-byte rms_norm, LEAN8P for the f32 norms. H200 2026-12-02 r1 lost:
    -- the 2-byte layer_norm's LEAN4P (bf16 4096 56.0% of copy against LEAN4's 77.6%), LEAN4P_RES (the
    -- residual form, bf16 / f32 [65536,4096] 64.0 / 83.5% against LEAN4_RES's 88.1 / 91.1%), and the
    -- 2-byte LEAN8P spilled 220-232 bytes in 128 registers: not generated
    if dt.size == 2 and (c == "lean8p" or op.name == "layer_norm") then return nil end
    return { nv = c == "lean8p" and 8 or 4, x = NX.PF, bound = c == "lean4p" and "768, 1" or "KG_NORM_MAX_GROUP, 1" }
  end
  if c == "lean4_resc" then
    -- the residual form with streaming cache hints on the input and the output
    if op.residual then return { nv = 4, x = NX.CS, bound = "KG_NORM_MAX_GROUP, 1", res = true } end
    return nil
  end
  local two, ln = dt.size == 2, op.name == "layer_norm"
  -- 2-byte layer_norm: kg_nmoments, each pass over a fresh opaque copy
  local mom8 = NX.NMOM + NX.OPQ + NX.NOCOPY + NX.OADDR + NX.RECOPY
  -- 2-byte layer_norm by two group sums (each pass over opaque vectors)
  local sep8 = NX.OPQ + NX.NOCOPY + NX.OADDR
  if c == "lean8c" then
    -- streaming cache hints; the 2-byte types' 8 vectors a lane in 80 registers (a 768-lane bound)
    if two then return { nv = 8, x = NX.CS + (ln and mom8 or NX.OPQ + NX.OADDR), bound = "768, 1" } end
    return { nv = 8, x = NX.CS, bound = "KG_NORM_LEAN_MAX_T, 1" }
  elseif c == "lean8s" then
    -- LEAN8C of the 2-byte layer_norm by two group sums; in 72 registers (an 896-lane bound: spill-free since the
    -- bf16 elements come straight from the vectors' words, kg_nld), so 28 warps a multiprocessor instead of 25
    if two and ln then return { nv = 8, x = NX.CS + sep8, bound = "1024, 1" } end
  end
  return nil
end
M.variant = variant

-- Classes the planner takes only under a tuning, left out of the modules:
-- class -> the class whose kernel the table holds instead (same geometry),
-- or nil. First the 2-byte modules (their first use, norm_bf16 / norm_f16,
-- took 11.4 / 11.1 ms on the H200 of 2026-12-02 with them; the limit is 10),
-- since session 37 (the bundle's size) f32 and f64 too: LEAN4L / LEAN8L (the
-- LOOSE tuning), LEAN4_RESC (the residual form's variant 1), and the
-- layer_norm's LEAN8C (variant 1; the 2-byte default is LEAN8S, and the f32
-- default's LEAN8C of 512 lanes turns into LEAN8P by the PF rule) and LEAN16
-- (which the planner takes for the 2-byte rms_norm alone). No default plan
-- reaches them (runtime/norm.c: loose and variant are 0 in the zeroed
-- tuning); under the tuning the base kernel runs the same geometry.
local function tuning_only(c, op, dt)
  if c == "lean4l" then return "lean4" end
  if c == "lean8l" or (op.name == "layer_norm" and (c == "lean8c" or c == "lean16")) then return "lean8" end
  if c == "lean4_resc" then return "lean4_res" end
  return nil
end

-- CLUSTER (templates/normc.cuh): softmax and log_softmax along an outer
-- axis, a column strip a thread-block cluster, on sm_90 (modules normc_<dtype>,
-- sm_90a alone; not f64). Configurations, in the order of the runtime's
-- kg_norm_ccfgs: t threads a block, k vectors a lane, lpr lanes a row
-- (LPR x 16 bytes a row of the strip), mb blocks a multiprocessor (the
-- launch bound; 1 where absent), ks more vectors a lane in shared memory
-- (0 where absent); a block holds (t / lpr) x (k + ks) rows. H200 (2026-12-02
-- r1/r2): strips held in registers alone (512 x 16, 1024 x 8, 256 x 16, 512 x 8,
-- 256 x 32 vectors) ran softmax f32 [16384,16384] dim 0 at 27-38% of copy,
-- 4 and 2 lanes a row (64- and 32-byte segments) 21-28%; half of the strip in
-- shared memory at two blocks a multiprocessor 58% (COLS 55%); and a cluster
-- that streamed its strip twice (the second read from L2) 45%: dropped.
-- A persistent pipelined form (the next strip streaming into shared memory
-- while this one's statistics, exchange and stores ran; 7 clusters of 16
-- resident, one block a multiprocessor) lost too: 43.8% against 59.3
-- (2026-12-02 session 9 r1): removed. So did a form without clusters
-- (session 10, r2 / r3): tiles of a strip in the order of a ticket counter,
-- each block reading its tile from memory for the (max, sum) partials and
-- applying the tile of a ticket a wave earlier (its strip final by then,
-- the tile re-read from L2): softmax f32 [16384,16384] dim 0 51.5% of copy
-- against 60.8, log_softmax 59.1 / 66.3, bf16 softmax 36.5 / 41.7, f32
-- [4096,65536] 51.2 / 67.0, [65536,4096] 50.6 / 53.4 (COLS); it won only
-- bf16 log_softmax [12000,22360], 45.4 / 31.8: removed.
-- Three blocks a multiprocessor (256 x (16 + 16) and 256 x (15 + 17) vectors in 80 registers, 56-112 bytes
-- spilled) lost (session 13 r1b, H200, same run): softmax f32 [16384,16384] dim 0 50.2 / 46.4% against 60.2,
-- log_softmax 56.4 / 60.6 against 65.9, bf16 softmax 36.1 / 39.4 against 42.0: removed.
-- ex: softmax of f32 keeps the sum's exps in place of the values and the apply multiplies them
-- (elsewhere the same kernel as without). ph: the persistent form of two halves (kg_norm_cluster_ph), t
-- threads a block, each half t / 2 of them holding a strip as a block of t / 2 threads of the other
-- configurations does (rows: a half's); the grid the clusters resident at once. Not a default: H200 s17r1 / r2,
-- same process, % of copy against the default: softmax f32 [16384,16384] dim 0 56.0 / 60.3, 54.9 / 60.5,
-- log_softmax 59.9 / 66.0, bf16 33.8 / 41.8, [8192,32768] 62.0 / 64.0, 62.3 / 64.7, [1000,262144] 73.0 / 75.3;
-- it won at four blocks a cluster, [4096,65536] 70.1 / 68.7, 71.5 / 69.0, and bf16 log_softmax [12000,22360]
-- 33.9 / 31.5 (twelve): kept as a tuning until a rule by cluster size is measured on more shapes. Its form
-- with each register and slot loading its next row as soon as stored lost more (48.7): removed.
-- tr: the cluster's partials gathered (every dtype) and merged by a tree (templates/normc.cuh,
-- kg_ncl_cluster; the f32 default, runtime/norm.c's CCFG_TR). TR with 24 vectors a lane in shared memory (40
-- in all, 1280 rows a block, 208-223 KB for two blocks a multiprocessor) lost everywhere (H200 s17r3, same
-- process, % of copy against TR: softmax f32 [16384,16384] dim 0 49.3 / 62.7 at clusters of 13, log_softmax
-- 54.0 / 67.0, bf16 17.1 / 41.8, [8192,32768] 56.2 / 64.8, [4096,65536] 58.0 / 69.5, [1000,262144] 62.8 /
-- 77.2): removed.
-- The two-pass form whose second pass re-reads each block's rows from L2 (1024 rows a block streamed 8 vectors
-- a lane at a time, nothing held between the passes, 2-8 blocks a multiprocessor capped by reserved shared
-- memory; L2 eviction priorities as tunings) lost everywhere (H200 s18r1, same process, best of 2, % of copy
-- against TR at softmax f32 [16384,16384] dim 0 62.7: 128-byte strips at 4 / 3 / 2 blocks a multiprocessor
-- 47.0 / 48.4 / 45.4, with evict_last on the first read and evict_first on the second and on the stores 52.8
-- (3) / 51.7 (2); 64-byte strips 30.4 (4) / 40.0 (8 blocks of 128); log_softmax 46.1-53.6 against 67.1; bf16
-- 24.2-40.1 against 41.8). ncu: the second read mostly missed L2 even with 2 x 128 KB a multiprocessor in
-- flight (34 MB): L2 read hit rate 8.1%, DRAM 1.89 GB read + 1.05 GB written for a 1.07 GB input (4 blocks:
-- 8.7%, 2.15 GB read). Its hybrid with the lane's first 8 rows in registers and 8 in shared memory (half the
-- rows through L2, 3 blocks a multiprocessor, 80 registers) 57.6 (log_softmax 59.8, bf16 38.4): removed.
-- dts / ops: the dtypes and ops that have the configuration's kernels (where absent: all); elsewhere the table
-- holds -1 and the runtime plans COLS under the tuning. Session 24 (the bundle's size, issue 11) left out the
-- kernels that no plan takes and no test needs as a twin: configuration 0 of f32 (its default until session 16,
-- then 4, since session 17 6), 1-3 (the other strip shapes, tunings since 2026-12-02: 512 x (16 + 16) lost past
-- 16384 rows, runtime/norm.c) and 6 of the 2-byte types (bf16 lost to 0: 27.9 / 41.8% of copy, s17r2); 4 and 5
-- (PH, a tuning until a rule by cluster size is measured, with 4 its bits twin) stayed until session 34.
-- Session 25 (H200 s25r1) made 28 the 2-byte default and 29 COLT's f32 default where 13 was: 0 and the f32 13 left
-- the bundle (their bits equal 28's and 29's, gpu/session_24_tunings_match_their_base_bits passed there).
-- Session 34 (the bundle's size again: 30.1 MiB after session 33's attnb90q modules, issue 11) left out the kernels
-- that only the tuning's force hook (kgi_norm_tuning.cluster: the tests and bench_norm) reaches: 5 (PH; plan_cluster
-- takes COLT's configurations, 6 or 28, never another without `one`), 4 with it (its bits twin; of the 2-byte types
-- the same code as 0, which has none since session 25), 17 (alt: colt_cfg skips it) and 16 of the 2-byte softmax
-- (plan_cluster takes EK's 22 there; log_softmax and f32 keep it). Forced, they plan COLS. no: the dtype-op pairs
-- ("bf16 softmax") without the configuration's kernels.
M.ccfgs = {
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, dts = {} },
  { t = 256, k = 8, lpr = 8, mb = 2, ks = 24, dts = {} },
  { t = 512, k = 8, lpr = 8, mb = 2, ks = 8, dts = {} },
  { t = 512, k = 16, lpr = 8, ks = 16, dts = {} },
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, ex = true, dts = {} },
  { t = 512, k = 16, lpr = 8, ks = 16, ex = true, ph = true, dts = {} },
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, ex = true, tr = true, dts = { f32 = true } },
  -- one: COLT (templates/normt.cuh), a block a tile of LPR x 16 bytes of columns and all of its rows (t / lpr x k),
  -- no cluster: outer axes of few rows (session 22)
  -- (ex: f32 softmax keeps its sum's exps for the apply, as configuration 4)
  { t = 256, k = 16, lpr = 16, mb = 2, one = true, ex = true },
  { t = 256, k = 16, lpr = 32, mb = 2, one = true, ex = true },
  { t = 256, k = 16, lpr = 64, mb = 2, one = true, ex = true },
  { t = 256, k = 4, lpr = 64, mb = 4, one = true, ex = true },
  { t = 256, k = 4, lpr = 256, mb = 4, one = true, ex = true },
  { t = 256, k = 8, lpr = 256, mb = 4, one = true, ex = true },
  -- H200 s22r3, same process, % of copy, COLT / COLS (main's plan): softmax f32 [16384,8,2048] dim 1 98.9 / 7.8 (256
  -- lanes x 8; 64 x 4: 48.8), [2048,3,4096] dim 1 81.5 / 3.5 (256 x 4), bf16 62.4 / 1.8, [4096,64,1024] dim 1 78.4 /
  -- 28.6 (64 x 16), log_softmax 95.2 / 28.8, bf16 softmax 53.7 / 15.2, [512,200,1536] dim 1 53.1 / 35.3 (16 x 16),
  -- [64,4194304] dim 0 79.0 / 38.0, [128,2097152] dim 0 70.8 / 46.4 (32 x 16), bf16 46.0 / 27.2. 256 lanes x 16
  -- (rows of 9-16) was built for s22r3 but neither measured nor GPU-tested there: removed.
  -- Lost and removed (H200 s22r2, same process, % of copy against the default COLT): 512 lanes a block, one block a
  -- multiprocessor, 16 row groups x 16 of 512 bytes / 32 x 16 of 256 bytes: softmax f32 [512,200,1536] dim 1 49.7 /
  -- 22.1 (53.1), [128,2097152] dim 0 38.1 / 15.2 (70.9), bf16 [4096,64,1024] dim 1 12.6 / 3.7 (54.3).
  -- narrow: COLT for columns of fewer than 16 vectors (session 23), 8, 4, 2 or 1 lanes a row: a block holds
  -- several tiles (units) of a few kilobytes, each of the row groups its column needs (the runtime's, A.group), so
  -- that every lane holds rows (a block one tile of 256 lanes left most idle there: [262144,32,32] dim 1 6.4% of
  -- copy). alt: a tuning alone, never the planner's. H200 s23r2, same process, % of copy, COLS / narrow with
  -- butterflies (the default) / with the shared-memory merge (s23r1's): softmax f32 [262144,32,32] dim 1 21.7 / 87.2
  -- / 73.9 (128 threads, a tuning: 89.4; [524288,8,32] 91.8 against 89.3), [262144,16,16] 6.3 / 85.0 / 74.5, bf16
  -- [262144,32,32] 11.2 / 62.1 / 44.4, [65536,64,16] 7.8 / 55.7 / 33.8, log_softmax bf16 [131072,100,16] 9.2 / 60.2 /
  -- 23.2. 256 x 4 vectors lost everywhere in s23r1 (51.4 against 75.6 at [262144,32,32]); 256 x 16 (two blocks a
  -- multiprocessor) 73.2.
  { t = 256, k = 8, lpr = 8, mb = 3, one = true, ex = true, dts = { f16 = true, bf16 = true } },
  { t = 256, k = 8, lpr = 4, mb = 3, one = true, ex = true },
  { t = 256, k = 8, lpr = 2, mb = 3, one = true, ex = true },
  { t = 256, k = 8, lpr = 1, mb = 3, one = true, ex = true, no = { ["f16 softmax"] = true, ["bf16 softmax"] = true } },
  { t = 128, k = 8, lpr = 8, mb = 6, one = true, ex = true, alt = true, dts = {} },
  -- (256 x 4 vectors and 256 x 16, tunings since session 23 that lost everywhere, removed in session 24)
  -- Session 24 candidates, tunings alone until H200 s25r1 (2026-12-05: all GPU tests passed; same process, best of
  -- 3, % of copy against the default). Kept as kernels: 22 (EK, 1 lane a row: the 2-byte softmax's default where
  -- COLT takes 16, bf16 [2097152,16,8] dim 1 47.8 / 32.3), 28 (P2 + VS: the 2-byte cluster default, was 0, bf16
  -- softmax [16384,16384] dim 0 50.7 / 42.0, log_softmax [12000,22360] 47.7 / 31.3) and 29 (VS: COLT's f32 narrow
  -- default where it takes 13, f32 [262144,32,32] dim 1 87.8 / 85.1); runtime/norm.c's plan_cluster. The others
  -- lost and have no kernels (dts = {}; forced, COLS): L4 48.3-50.8 against 61.8-68.8; ST (4 / 10 / 20 us) within
  -- 0.7 points either way; VS's 27 f32 softmax 59.5 / 61.8, [8192,32768] 61.3 / 64.2, [4096,65536] 65.4 / 68.8
  -- (log_softmax 68.8 / 66.8); P2 alone bf16 softmax 52.6 but log_softmax 29.8 / 31.3; EK 19-21, 23, 24 below the
  -- default on every row of their lane counts (bf16 [262144,32,32] 44.5-48.7 / 60.7, [65536,64,16] 6.4-44.0 / 54.7,
  -- [131072,32,64] 30.4-48.1 / 60.7). dts / ops: the dtypes and ops that have its kernels (where absent: all);
  -- elsewhere the table holds -1 and the runtime plans COLS under the tuning. L4: configuration 6 (exps kept, the tree merge) with 4 lanes a row, 64-byte strips, 2048 rows a block, so
  -- that dim 0 of [16384,16384] takes clusters of 8 blocks (4 multiprocessors) instead of 16 (8): clusters of 16 left
  -- 40 of the 264 block slots idle (H200 s23r1 ncu: 14 clusters resident) and smaller clusters ran faster (s23, % of
  -- copy by the cluster size of configuration 6: [16384,16384] 16 blocks 62.0, [8192,32768] 8 64.8, [4096,65536] 4
  -- 69.5, [1000,262144] 1 75.9).
  { t = 256, k = 16, lpr = 4, mb = 2, ks = 16, ex = true, tr = true, dts = {} },
  -- ek: the 2-byte softmax's narrow COLT with the sum's exps kept in f32 for the apply (one exp an element instead
  -- of two; templates/normt.cuh's EK), 4 vectors a lane at 3 blocks a multiprocessor (80 registers; the exps of 8
  -- vectors spill 124 bytes there), or 8 at 2 (120 registers), ptxas 13.0; with vs (below).
  { t = 256, k = 4, lpr = 8, mb = 3, one = true, ek = true, vs = true, alt = true, dts = {} },
  { t = 256, k = 4, lpr = 4, mb = 3, one = true, ek = true, vs = true, alt = true, dts = {} },
  { t = 256, k = 4, lpr = 2, mb = 3, one = true, ek = true, vs = true, alt = true, dts = {} },
  { t = 256, k = 4, lpr = 1, mb = 3, one = true, ek = true, vs = true, alt = true, dts = { f16 = true, bf16 = true }, ops = { softmax = true } },
  { t = 256, k = 8, lpr = 4, mb = 2, one = true, ek = true, vs = true, alt = true, dts = {} },
  { t = 256, k = 8, lpr = 2, mb = 2, one = true, ek = true, vs = true, alt = true, dts = {} },
  -- p2: the 2-byte default (configuration 0) with COLT's 2-byte habits: maxima by packed pairs, softmax's output
  -- exps flushed below 2^-126 (H200 s22r2, COLT with / without them: softmax bf16 [4096,64,1024] dim 1 54.3 / 44.7).
  -- Session 26 candidate (forced cluster=26), dropped again in session 28: P2 alone against 28 (P2 + VS) on the
  -- 2-byte softmax, H100 s28r1 (2026-12-05), same process, best of 3: bf16 [16384,16384] dim 0 552.9 / 557.0 us,
  -- [8192,32768] 501.9 / 510.4, [4096,65536] 470.3 / 476.2 (each under the 2% a win needed), [256,300,2048] dim 1
  -- 400.3 / 385.0 and f16 [16384,16384] dim 0 547.5 / 503.2 (losses). No kernels; 28 stays the default.
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, p2 = true, dts = {} },
  -- (26: ST, configuration 6 whose first wave's odd clusters started late, 4-20 us, so that the clusters' load /
  -- exchange / store phases ran out of phase; lost, above. Its code, the launch's wait and the tuning's stagger were
  -- removed in session 26; the row stays, 6's shape without kernels, so that the numbers after it keep their force hooks.)
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, ex = true, tr = true, dts = {} },
  -- vs: the outputs by 16-byte stores (st.global.v4, templates/normc.cuh's kg_ncl_st16): main's cluster and COLT
  -- kernels store each vector as four 4-byte stores (their PTX: st.global.f32 / st.global.v2.u16, which LLVM split
  -- the uint4 store into; ptxas does not merge them: the SASS of 6 with vs alone is 96 instructions shorter, 128
  -- stores a lane become 32); and the sum's shifts computed once a column (main's PTX computes kg_nshift's abs /
  -- setp / selp again for every element). The same bits. SASS instructions (cubin .text / 16, ptxas 13.0): 6 4744
  -- -> 27 4400; 0 (bf16) 8408 -> P2 6560 -> 28 5936. Configuration 6 (f32), P2 (the 2-byte types), and COLT's
  -- narrow 13 (f32, 8 lanes a row); EK's kernels have the stores (their shifts hoisted spilled 20 bytes at 80
  -- registers: not).
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, ex = true, tr = true, vs = true, dts = {} },
  { t = 256, k = 16, lpr = 8, mb = 2, ks = 16, p2 = true, vs = true, dts = { f16 = true, bf16 = true } },
  { t = 256, k = 8, lpr = 8, mb = 3, one = true, ex = true, vs = true, alt = true, dts = { f32 = true } },
  -- Session 26 candidate K4 (a tuning, forced cluster=31): COLT's narrow 15 (2 lanes a row, f32) at 4 vectors a lane
  -- instead of 8, with VS's stores, at MB blocks a multiprocessor instead of 3 (ptxas 13.0: 15 takes 73 registers,
  -- K4 fewer: more lanes resident to hold loads in flight). Softmax f32 [2097152,4,8] dim 1 ran 15 at 27.4% of copy
  -- (s24f), its lanes 4 rows of 16 bytes (64 bytes in flight a lane, 3 x 256 lanes a multiprocessor); EK's 22 (the
  -- same shape at 1 lane a row, k 4 against 16's 8, bf16 [2097152,16,8]) won 47.8 / 32.3 in s25r1. 30: 5 blocks a
  -- multiprocessor (48 registers; softmax spills 4 bytes, loads 8), 31: 4 (56 registers, no spill). K2 (32, forced
  -- cluster=33): 2 vectors a lane at 6 blocks (40 registers; softmax spills 12 bytes, loads 20; 256 rows at most),
  -- so that a column of 4 rows takes 2 row groups (half the rows a lane, as 22 against 16).
  -- H100 s28r1 (2026-12-05), same process, best of 3, us, 15 (main) / 30 / 31 / 32: softmax f32 [2097152,4,8]
  -- dim 1 549.0 / 198.5 / 189.8 / 201.9, log_softmax 559.1 / 199.4 / 194.2 / 192.9, softmax [1048576,8,8]
  -- 563.2 / 183.1 / 182.2 / 212.0, log_softmax [32768,200,8] 166.2 / 220.2 / 231.7 / 524.1. Each won every row of
  -- n <= 8 and lost [32768,200,8]; 31 had the largest least gain (0.347 x 15's time at worst): it is the f32 default
  -- where COLT takes 15 and the column has at most 8 rows (runtime/norm.c CCFG_K4). 30 and 32 have no kernels since.
  { t = 256, k = 4, lpr = 2, mb = 5, one = true, ex = true, vs = true, alt = true, dts = {} },
  { t = 256, k = 4, lpr = 2, mb = 4, one = true, ex = true, vs = true, alt = true, dts = { f32 = true } },
  { t = 256, k = 2, lpr = 2, mb = 6, one = true, ex = true, vs = true, alt = true, dts = {} },
}

-- BULK (templates/normb.cuh): the 2-byte norms (layer_norm, rms_norm and its
-- residual form) on sm_90, rows staged in shared memory by the bulk copy
-- engine (modules normc_<dtype>). Configurations, in the order of the
-- runtime's kg_norm_bcfgs: t threads a block (a row), nv vectors a lane, mb
-- blocks a multiprocessor (the launch bound; the ring's stages share the
-- multiprocessor's shared memory), wr: weight and bias held in registers
-- (else read at each apply); w: BULKW, a warp a row (t / 32 warps, each with
-- its own ring; nv the most vectors a lane of a row), weight and bias staged
-- in shared memory, one block a multiprocessor; r: BULKW with the row in registers (nv vectors a lane), its stage
-- refilled as soon as the warp holds it (so one stage a warp serves).
-- dts / ops as for M.ccfgs: since session 24 (the bundle's size) only configuration 2 of the bf16 rms_norm has
-- kernels, the one BULK plan a default takes (the residual form of 8193..16384 elements, runtime/norm.c's
-- plan_bulk), and configuration 1 of the same, a tuning kept so that configuration 2's machine code stays as it
-- was (with no other BULK kernel of its op a device function it shares would have one call site and be inlined
-- into it: ptxas 13.0 gave other code); the others, tunings since LEAN beat them (sessions 14-16, runtime/norm.c
-- has the figures), were left out: the tuning then plans as without BULK.
M.bcfgs = {
  { t = 128, nv = 4, mb = 4, wr = true, dts = {} },
  { t = 256, nv = 4, mb = 2, wr = true, dts = { bf16 = true }, ops = { rms_norm = true } },
  { t = 512, nv = 4, mb = 1, wr = true, dts = { bf16 = true }, ops = { rms_norm = true } },
  { t = 256, nv = 8, mb = 2, wr = false, dts = {} },
  { t = 64, nv = 8, mb = 8, wr = false, dts = {} },
  { t = 128, nv = 64, mb = 1, w = true, dts = {} },
  { t = 192, nv = 64, mb = 1, w = true, dts = {} },
  { t = 256, nv = 64, mb = 1, w = true, dts = {} },
  { t = 384, nv = 64, mb = 1, w = true, dts = {} },
  { t = 384, nv = 16, mb = 1, w = true, r = true, dts = {} },
}

local common = require("common")
local typed = common.typed

local stats_enum = { lse = "KG_NS_LSE", moments = "KG_NS_MOMENTS", sumsq = "KG_NS_SUMSQ" }
local axes_enum = { one = "KG_NORM_AXIS_ONE", any = "KG_NORM_AXIS_ANY", last = "KG_NORM_AXIS_LAST",
                    last1 = "KG_NORM_AXIS_LAST1" }
local row_values = { m = true, s = true, ls = true, lse = true, mean = true, rstd = true }

-- The functor record of op in dtype dt (templates/norm_functor.cu), shared
-- by the norm_<dtype> and normc_<dtype> modules.
local function functor(op, dt)
  local res = op.results or {}
  local f = {
    name = "kg_norm_" .. op.name .. "_" .. dt.name, stats = stats_enum[op.stats],
    elementwise = op.apply and "true" or "false", residual = op.residual and "true" or "false",
    nres = #res, load = string.format(dt.load, "x_"), store = string.format(dt.store, "v_"),
    apply = op.apply and typed(op.apply, "T"):gsub("%f[%w_]exp%(", "kg_nexp(") or "x", res0 = res[1] or "lse",
    res1 = res[2] or "rstd",
  }
  -- softmax-like applies, exp(x - m) times what does not name x: the LEAN
  -- class keeps the exps of the statistics (f32, f64) and applies
  -- apply_e to them
  local ae, nexp = f.apply:gsub("kg_nexp%(x %- m%)", "e")
  f.expm = (nexp == 1 and not ae:find("%f[%w_]x%f[^%w_]")) and "true" or "false"
  f.apply_e = f.expm == "true" and ae or "e"
  return f
end

-- functor_struct(f) for a module template: the functor struct's text
-- (templates/norm_functor.cu), without its last newline.
local function functor_struct(G, dt, acc)
  return function(f) return (G:render("norm_functor.cu", { f = f, dtype = dt, acc = acc }):gsub("\n$", "")) end
end

function M.generate(G)
  local dtypes, ops = G.dtypes, G.catalogue.norm
  local D = common.by_name(dtypes)
  local floats = { D.f32, D.f64, D.f16, D.bf16 }
  local table_ = {}
  for i, op in ipairs(ops) do
    assert(stats_enum[op.stats], op.name .. ": unknown stats " .. tostring(op.stats))
    assert(axes_enum[op.axes], op.name .. ": unknown axes " .. tostring(op.axes))
    assert(op.apply or op.results, op.name .. ": needs an apply or results")
    for _, r in ipairs(op.results or {}) do assert(row_values[r], op.name .. ": unknown result " .. r) end
    op.enum = "KG_NORM_" .. op.name:upper()
    op.id = i
    table_[i] = {}
  end

  for _, dt in ipairs(floats) do
    local module = G:module("norm_" .. dt.name)
    local acc = dt.name == "f64" and "double" or "float"
    local functors = {}
    for _, op in ipairs(ops) do
      local f = functor(op, dt)
      -- ROWS launch bound: two 512-lane blocks per multiprocessor (64
      -- registers) for the softmax family, where that does not spill;
      -- the norms (weight, bias) take 96 (a 640-lane bound), f64 and the
      -- residual form 128
      f.rows_bound = dt.name == "f64" and "KG_NORM_MAX_GROUP, 1"
                     or (op.axes == "last" or op.axes == "last1") and "640, 1" or "KG_NORM_MAX_GROUP, 2"
      functors[#functors + 1] = f
      table_[op.id][dt.index] = {}
      f.variants = {}
      f.leanu = dt.name ~= "f64"
      -- LEAN4L / LEAN8L: in no module since session 37 (tuning_only)
      f.loose = false
      -- LEANU4S / LEANU8S bounds: the 2-byte types' 8 vectors a lane, and
      -- their layer_norm's 4, in 80 registers (a 768-lane bound: <= 512
      -- lanes a row; ptxas spilled them at 64)
      f.u4s_bound = (dt.size == 2 and op.name == "layer_norm") and "768, 1" or "KG_NORM_LEAN_MAX_T, 1"
      f.u8s_bound = dt.size == 2 and "768, 1" or "KG_NORM_LEAN_MAX_T, 1"
      -- LEANW: LEAN over 4-byte words (2 elements of the 2-byte types, 1 of
      -- f32); the 2-byte lse ops as LEAN4F (packed max, flushed exps)
      f.wvec = 4 // dt.size
      f.colsv = op.stats == "lse" and op.apply ~= nil and dt.name ~= "f64"
      f.wx = (dt.size == 2 and op.stats == "lse") and 64 or 0
      for ci, c in ipairs(M.classes) do
        local isvar = vclasses[c]
        local vr = isvar and variant(c, op, dt)
        local alias = tuning_only(c, op, dt)
        if alias then
          for bi, bc in ipairs(M.classes) do
            if bc == alias then
              table_[op.id][dt.index][ci - 1] = table_[op.id][dt.index][bi - 1]
            end
          end
          assert(table_[op.id][dt.index][ci - 1], c .. ": no " .. alias)
        elseif isvar and not vr then
          -- the base class's kernel (lean8x -> lean8, lean4p_res -> lean4_res)
          local base = vfall[c] or vbase[c] or c:sub(1, -2)
          for bi, bc in ipairs(M.classes) do
            if bc == base then table_[op.id][dt.index][ci - 1] = table_[op.id][dt.index][bi - 1] end
          end
          assert(table_[op.id][dt.index][ci - 1], c .. ": no base class")
        elseif isvar then
          vr.class = c
          f.variants[#f.variants + 1] = vr
          table_[op.id][dt.index][ci - 1] = G:kernel({ name = f.name .. "_" .. c, module = module, vec = 16 // dt.size,
                                                       desc = op.name .. "(" .. dt.name .. ") [" .. c .. "]" })
        elseif (c:match("^leanu") or c:match("^leanw")) and dt.name == "f64" and (op.residual or not c:match("_res$")) then
          -- LEANU: not for f64 (the planner never picks it there): the strided kernel
          for bi, bc in ipairs(M.classes) do
            if bc == "strided" then table_[op.id][dt.index][ci - 1] = table_[op.id][dt.index][bi - 1] end
          end
          assert(table_[op.id][dt.index][ci - 1], c .. ": strided comes first")
        elseif c:match("^colsv") and not f.colsv then
          -- COLSV: softmax and log_softmax of f32, f16, bf16 alone (the planner never picks it elsewhere): COLS
          local base = c:match("^colsv_stats") and "cols_stats" or "cols_apply"
          for bi, bc in ipairs(M.classes) do
            if bc == base then table_[op.id][dt.index][ci - 1] = table_[op.id][dt.index][bi - 1] end
          end
        elseif c:match("_res$") and not op.residual then
          -- no residual form: the class without it (rows_res -> rows, lean4_res -> lean4)
          local base = c:gsub("_res$", "")
          for bi, bc in ipairs(M.classes) do
            if bc == base then table_[op.id][dt.index][ci - 1] = table_[op.id][dt.index][bi - 1] end
          end
        else
          table_[op.id][dt.index][ci - 1] = G:kernel({ name = f.name .. "_" .. c, module = module, vec = 16 // dt.size,
                                                       desc = op.name .. "(" .. dt.name .. ") [" .. c .. "]" })
        end
      end
    end
    G:write("norm_" .. dt.name .. ".cu", G:render("norm.cu", {
      header = G.header("templates/norm.cu and gen/catalogue.lua"),
      dtype = dt, acc = acc, functors = functors, functor_struct = functor_struct(G, dt, acc), classes = M.classes,
      vec = 16 // dt.size,
      -- ROWS: vectors a lane holds per chunk (KG_NORM_ROWS_NV)
      rows_nv = "KG_NORM_ROWS_NV(" .. dt.size .. ")",
    }))
  end

  -- CLUSTER modules (sm_90a), after the norm_<dtype> modules so that their
  -- kernels keep their indices
  local ctable = {}
  for i, c in ipairs(M.ccfgs) do
    c.id, c.mb = i - 1, c.mb or 1
    c.ks = c.ks or 0
    c.rows = (c.ph and c.t // 2 or c.t) // c.lpr * (c.k + c.ks)
  end
  local btable = {}
  for i, c in ipairs(M.bcfgs) do c.id = i - 1 end
  for _, dt in ipairs({ D.f32, D.f16, D.bf16 }) do
    local module = G:module("normc_" .. dt.name, { sm90a = true })
    local functors, bfunctors = {}, {}
    for _, op in ipairs(ops) do
      if op.stats == "lse" and op.apply then
        local f = functor(op, dt)
        functors[#functors + 1] = f
        ctable[op.id] = ctable[op.id] or {}
        local row = {}
        f.ccfgs = {}
        for _, c in ipairs(M.ccfgs) do
          if (c.dts and not c.dts[dt.name]) or (c.ops and not c.ops[op.name]) or (c.no and c.no[dt.name .. " " .. op.name]) then
            row[#row + 1] = -1 -- no kernel of this configuration for this dtype or op (the runtime: COLS)
          else
            f.ccfgs[#f.ccfgs + 1] = c
            row[#row + 1] = G:kernel({ name = f.name .. "_cl" .. c.id, module = module, vec = 16 // dt.size,
                                       desc = op.name .. "(" .. dt.name .. ") [cluster " .. c.t .. "x" .. c.k .. "+" .. c.ks ..
                                       "/" .. c.lpr .. (c.ex and " ex" or "") .. (c.ek and " ek" or "") .. (c.vs and " vs" or "") .. (c.ph and " ph" or "") .. (c.tr and " tr" or "") .. (c.one and " colt" or "") .. "]" })
          end
        end
        ctable[op.id][dt.index] = row
      end
      if dt.size == 2 and (op.name == "layer_norm" or op.name == "rms_norm") then
        local f = functor(op, dt)
        bfunctors[#bfunctors + 1] = f
        btable[op.id] = btable[op.id] or {}
        local row = {}
        f.bcfgs = {}
        for _, c in ipairs(M.bcfgs) do
          if (c.dts and not c.dts[dt.name]) or (c.ops and not c.ops[op.name]) then
            row[#row + 1] = -1 -- no kernel of this configuration for this dtype or op (the runtime: no BULK plan)
          else
            f.bcfgs[#f.bcfgs + 1] = c
            row[#row + 1] = G:kernel({ name = f.name .. "_bulk" .. c.id, module = module, vec = 16 // dt.size,
                                       desc = op.name .. "(" .. dt.name .. ") [bulk" .. (c.w and "w " or " ") .. c.t .. "x" ..
                                       c.nv .. "]" })
          end
        end
        btable[op.id][dt.index] = row
      end
    end
    local names = {}
    for _, c in ipairs(M.ccfgs) do
      names[#names + 1] = string.format("%d threads x %d (+%d) vectors / %d lanes a row%s", c.t, c.k, c.ks, c.lpr,
                                        (c.ex and " (exps kept)" or c.ek and " (2-byte softmax exps kept)" or "") .. (c.vs and " (16-byte stores)" or ""))
    end
    G:write("normc_" .. dt.name .. ".cu", G:render("normc.cu", {
      header = G.header("templates/normc.cu and gen/catalogue.lua"),
      dtype = dt, acc = "float", functors = functors, functor_struct = functor_struct(G, dt, "float"), cfgs = M.ccfgs,
      bfunctors = bfunctors, bcfgs = M.bcfgs,
      vec = 16 // dt.size,
      cfgnames = table.concat(names, "; "),
    }))
  end

  -- the dispatch table and each op's rules
  local t = { G.header("gen/catalogue.lua"), '#include "kg_norm_table.h"\n\n',
              "const int16_t kg_norm_table[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CLASS_COUNT] = {\n" }
  for _, op in ipairs(ops) do
    for _, dt in ipairs(floats) do
      local ks = table_[op.id][dt.index]
      local row = {}
      for ci = 1, #M.classes do row[ci] = tostring(ks[ci - 1]) end
      t[#t + 1] = string.format("    [%s][%s] = {%s},\n", op.enum, dt.enum, table.concat(row, ", "))
    end
  end
  t[#t + 1] = "};\n\nconst int16_t kg_norm_ctable[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CCFG_COUNT] = {\n"
  for _, op in ipairs(ops) do
    for _, dt in ipairs(floats) do
      local row = ctable[op.id] and ctable[op.id][dt.index]
      if row then
        local r = {}
        for i = 1, #row do r[i] = tostring(row[i]) end
        t[#t + 1] = string.format("    [%s][%s] = {%s},\n", op.enum, dt.enum, table.concat(r, ", "))
      end
    end
  end
  t[#t + 1] = "};\n\nconst int16_t kg_norm_btable[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_BCFG_COUNT] = {\n"
  for _, op in ipairs(ops) do
    for _, dt in ipairs(floats) do
      local row = btable[op.id] and btable[op.id][dt.index]
      if row then
        local r = {}
        for i = 1, #row do r[i] = tostring(row[i]) end
        t[#t + 1] = string.format("    [%s][%s] = {%s},\n", op.enum, dt.enum, table.concat(r, ", "))
      end
    end
  end
  t[#t + 1] = "};\n\nconst kg_norm_bcfg kg_norm_bcfgs[KG_NORM_BCFG_COUNT] = {\n"
  for _, c in ipairs(M.bcfgs) do
    t[#t + 1] = string.format("    {%d, %d, %d, %d, %d, %d},\n", c.t, c.nv, c.mb, c.wr and 1 or 0, c.w and 1 or 0,
                              c.r and 1 or 0)
  end
  t[#t + 1] = "};\n\nconst kg_norm_ccfg kg_norm_ccfgs[KG_NORM_CCFG_COUNT] = {\n"
  for _, c in ipairs(M.ccfgs) do
    t[#t + 1] = string.format("    {%d, %d, %d, %d, %d, %d, %d, %d},\n", c.t, c.k, c.lpr, c.ks, c.rows,
                              c.ph and 1 or 0, c.one and 1 or 0, c.alt and 1 or 0)
  end
  t[#t + 1] = "};\n\nconst kg_norm_info kg_norm_infos[KG_NORM_COUNT] = {\n"
  for _, op in ipairs(ops) do
    t[#t + 1] = string.format("    [%s] = {\"%s\", %s, %s, %d, %d, %d},\n", op.enum, op.name, stats_enum[op.stats]:gsub("KG_NS", "KG_NORM_STATS"),
                              axes_enum[op.axes], op.apply and 1 or 0, #(op.results or {}), op.residual and 1 or 0)
  end
  t[#t + 1] = "};\n"
  G:write("kg_norm_table.c", table.concat(t))
  G:write("kg_norm_table.h", G.header("gen/norm.lua") .. [[
#ifndef KG_NORM_TABLE_H
#define KG_NORM_TABLE_H

#include "kg_norm.h"
#include "norm_params.h"

typedef enum { KG_NORM_STATS_LSE, KG_NORM_STATS_MOMENTS, KG_NORM_STATS_SUMSQ } kg_norm_stats;
typedef enum { KG_NORM_AXIS_ONE, KG_NORM_AXIS_ANY, KG_NORM_AXIS_LAST, KG_NORM_AXIS_LAST1 } kg_norm_axes;

/* What the runtime needs to know of each normalization. */
typedef struct kg_norm_info {
    const char *name;
    kg_norm_stats stats;
    kg_norm_axes axes;
    int elementwise; /* 1: writes an output element per input element */
    int nres;        /* per-row results it can return */
    int residual;    /* 1: has the fused residual form */
} kg_norm_info;

extern const kg_norm_info kg_norm_infos[KG_NORM_COUNT];

/* Kernel index for [op][dtype][class]; entries of non-float dtypes are 0
   and never reached (the dtype is checked first). */
extern const int16_t kg_norm_table[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CLASS_COUNT];

/* CLUSTER (sm_90 only, templates/normc.cuh): softmax and log_softmax along an
   outer axis, one kernel per configuration; entries without one are 0 (the
   runtime asks only for softmax and log_softmax of f32, f16, bf16), -1 where a
   configuration has no kernel for that op or dtype (gen/norm.lua's dts, ops). */
#define KG_NORM_CCFG_COUNT ]] .. #M.ccfgs .. [[

typedef struct kg_norm_ccfg {
    int threads; /* a block */
    int k;       /* 16-byte vectors a lane */
    int lpr;     /* lanes a row of the strip */
    int ks;      /* 16-byte vectors a lane in dynamic shared memory (ks x threads x 16 bytes) */
    int rows;    /* rows of a column a block holds (ph: a half) */
    int ph;      /* 1: the persistent form of two halves (a grid of the clusters resident at once) */
    int one;     /* 1: COLT, a block a tile of the columns and all its rows (clusters of one block; fewer than 16 lanes
                    a row: several tiles a block) */
    int alt;     /* 1: a tuning alone (never the planner's choice) */
} kg_norm_ccfg;
extern const kg_norm_ccfg kg_norm_ccfgs[KG_NORM_CCFG_COUNT];
extern const int16_t kg_norm_ctable[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_CCFG_COUNT];

/* BULK (sm_90 only, templates/normb.cuh): the 2-byte layer_norm and rms_norm
   (the residual form too), rows staged by the bulk copy engine, one kernel
   per configuration; entries without one are 0, -1 where a configuration has
   no kernel for that op or dtype (gen/norm.lua's dts, ops). */
#define KG_NORM_BCFG_COUNT ]] .. #M.bcfgs .. [[

typedef struct kg_norm_bcfg {
    int threads; /* a block, which serves a row at a time */
    int nv;      /* 16-byte vectors a lane */
    int mb;      /* blocks a multiprocessor (the launch bound) */
    int wr;      /* 1: weight and bias in registers */
    int warp;    /* 1: BULKW, a warp a row (nv: the most vectors a lane), weight and bias in shared memory */
    int regs;    /* 1: BULKW with the row in registers (nv vectors a lane): one stage a warp suffices */
} kg_norm_bcfg;
extern const kg_norm_bcfg kg_norm_bcfgs[KG_NORM_BCFG_COUNT];
extern const int16_t kg_norm_btable[KG_NORM_COUNT][KG_DTYPE_COUNT][KG_NORM_BCFG_COUNT];

#endif
]])

  -- the public op enum
  local h = common.op_header(G, "KG_NORM_OPS_H", "Normalizations, in catalogue order (see kg_norm.h).", "kg_norm_op",
                             "KG_NORM_NONE", "KG_NORM_COUNT", ops)
  h[#h + 1] = common.header_end
  G:write("kg_norm_ops.h", table.concat(h))

  -- the CPU reference of one row, in double
  local r = { G.header("gen/catalogue.lua"),
              "#include <math.h>\n#include <stdint.h>\n\n#include \"kg_norm_reference.h\"\n" }
  local entries = {}
  for _, op in ipairs(ops) do
    local stats
    if op.stats == "lse" then
      stats = [[
    double M = -INFINITY;
    for (int64_t k = 0; k < n; k++)
        M = (x[k] != x[k] || x[k] > M) ? x[k] : M;
    const double m = isfinite(M) ? M : 0.0;
    double s = 0;
    for (int64_t k = 0; k < n; k++)
        s += exp(x[k] - m);
    const double ls = log(s), lse = m + ls, mean = 0, rstd = 0;
]]
    elseif op.stats == "moments" then
      stats = [[
    double sum = 0, q = 0;
    for (int64_t k = 0; k < n; k++)
        sum += x[k];
    const double mean = sum / (double)n;
    for (int64_t k = 0; k < n; k++)
        q += (x[k] - mean) * (x[k] - mean);
    const double rstd = 1.0 / sqrt(q / (double)n + eps), m = 0, s = 0, ls = 0, lse = 0;
]]
    else
      stats = [[
    double q = 0;
    for (int64_t k = 0; k < n; k++)
        q += x[k] * x[k];
    const double rstd = 1.0 / sqrt(q / (double)n + eps), m = 0, s = 0, ls = 0, lse = 0, mean = 0;
]]
    end
    local res = op.results or {}
    local apply = op.apply and string.format([[
    for (int64_t k = 0; k < n; k++) {
        const double xk = x[k], w = wt ? wt[k] : 1.0, b = bs ? bs[k] : 0.0;
        y[k] = norm_apply_%s(xk, m, s, ls, lse, mean, rstd, w, b);
    }
]], op.name) or ""
    if op.apply then
      r[#r + 1] = string.format([[

static double norm_apply_%s(double x, double m, double s, double ls, double lse, double mean, double rstd, double w,
                          double b)
{
    typedef double T;
    (void)sizeof(T), (void)m, (void)s, (void)ls, (void)lse, (void)mean, (void)rstd, (void)w, (void)b;
    return %s;
}
]], op.name, typed(op.apply, "T"))
    end
    r[#r + 1] = string.format([[

static void norm_ref_%s(const double *x, int64_t n, const double *wt, const double *bs, double eps, double *y,
                        double *r0, double *r1)
{
%s%s    (void)wt, (void)bs, (void)eps, (void)y, (void)m, (void)s, (void)ls, (void)lse, (void)mean, (void)rstd;
    if (r0)
        *r0 = %s;
    if (r1)
        *r1 = %s;
}
]], op.name, stats, apply, res[1] or "0", res[2] or "0")
    entries[#entries + 1] = string.format("    [%s] = norm_ref_%s,\n", op.enum, op.name)
  end
  r[#r + 1] = "\nconst kg_norm_ref_fn kg_norm_refs[KG_NORM_COUNT] = {\n" .. table.concat(entries) .. "};\n"
  G:write("kg_norm_reference.c", table.concat(r))
  G:write("kg_norm_reference.h", G.header("gen/catalogue.lua") .. [[
#ifndef KG_NORM_REFERENCE_H
#define KG_NORM_REFERENCE_H

#include <stdint.h>

#include "kg_norm.h"

/* The CPU reference of one row of n elements x, in double: y (the output
   row, element-wise ops), *r0 and *r1 (the per-row results, where not
   NULL). wt and bs are the weight and bias along the row (NULL: 1 and 0). */
typedef void (*kg_norm_ref_fn)(const double *x, int64_t n, const double *wt, const double *bs, double eps, double *y,
                               double *r0, double *r1);

extern const kg_norm_ref_fn kg_norm_refs[KG_NORM_COUNT];

#endif
]])
end

-- the C enums whose order the lists above must match (expand.lua checks)
M.enums = { { "templates/norm_params.h", "kg_norm_class", "KG_NORM_", M.classes } }

return M
