// nvcc builds the same op file: its reduction then runs on CUDA too and it
// registers it for CUDA (see ../argmax.cpp).
#include "../argmax.cpp"
