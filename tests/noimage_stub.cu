// noimage_stub.cu - a kernel for sm_100 only (build/noimage: the bundle of test_noimage_real).
extern "C" __global__ void kg_noimage_stub(int *p)
{
    if (p)
        *p = 1;
}
