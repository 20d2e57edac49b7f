// nvcc builds the same op file: its kernels then run on CUDA too and it
// registers them for CUDA (see ../mul_sigmoid.cpp).
#include "../mul_sigmoid.cpp"
