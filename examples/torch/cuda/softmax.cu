// nvcc builds the same op file: its kernels then run on CUDA too and it
// registers them for CUDA (see ../softmax.cpp).
#include "../softmax.cpp"
