// The Python module the package imports; loading it registers the op.
#include <Python.h>

static PyModuleDef scaled_add_module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&scaled_add_module); }
