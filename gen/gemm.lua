-- gemm.lua - the GEMM family: cuBLAS does the work, so it generates no
-- kernels. It is listed as a family for its build pieces (see expand.lua):
-- runtime/gemm.c plus runtime/blas.c, tests/test_gemm.c, bench/bench_gemm.c,
-- whose programs also link cuBLAS directly.
return {
  runtime = { "blas.c", "pack.c" },
  libs = "-lcublasLt -lcublas",
}
