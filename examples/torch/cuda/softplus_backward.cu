// nvcc builds the same op file: its kernels then run on CUDA too and it
// registers them for CUDA (see ../softplus_backward.cpp).
#include "../softplus_backward.cpp"
