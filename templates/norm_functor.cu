@-- norm_functor.cu - the functor struct of one normalization op (one dtype),
@-- rendered by gen/norm.lua's functor_struct for templates/norm.cu and
@-- templates/normc.cu (f: the op's functor record; dtype; acc).

struct $(f.name) {
    typedef $(dtype.storage) in_t;
    typedef $(acc) acc_t;
    static constexpr int stats = $(f.stats);
    static constexpr bool elementwise = $(f.elementwise);
    static constexpr bool residual = $(f.residual);
    static constexpr int nres = $(f.nres);
    static __device__ __forceinline__ acc_t ld(in_t x_) { return (acc_t)($(f.load)); }
    static __device__ __forceinline__ in_t st(acc_t v_) { return $(f.store); }
    static __device__ __forceinline__ acc_t apply(acc_t x, const kg_nrow<acc_t> &R_, acc_t w, acc_t b)
    {
        typedef acc_t T;
        const T m = R_.m, s = R_.s, ls = R_.ls, lse = R_.lse, mean = R_.mean, rstd = R_.rstd;
        (void)m, (void)s, (void)ls, (void)lse, (void)mean, (void)rstd, (void)w, (void)b;
        return $(f.apply);
    }
    /* expm: apply(x) = apply_e(exp(x - m)) */
    static constexpr bool expm = $(f.expm);
    static __device__ __forceinline__ acc_t apply_e(acc_t e, const kg_nrow<acc_t> &R_)
    {
        typedef acc_t T;
        const T m = R_.m, s = R_.s, ls = R_.ls, lse = R_.lse, mean = R_.mean, rstd = R_.rstd;
        (void)m, (void)s, (void)ls, (void)lse, (void)mean, (void)rstd;
        return $(f.apply_e);
    }
    static __device__ __forceinline__ acc_t result0(const kg_nrow<acc_t> &R_) { return R_.$(f.res0); }
    static __device__ __forceinline__ acc_t result1(const kg_nrow<acc_t> &R_) { return R_.$(f.res1); }
};
