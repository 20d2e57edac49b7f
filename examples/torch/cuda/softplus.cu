// nvcc builds the same op file: for_each then runs on CUDA too and the
// file registers its CUDA kernels (see softplus.cpp).
#include "../softplus.cpp"
