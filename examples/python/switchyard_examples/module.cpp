// The Python module behind `import switchyard_examples`: loading it runs the
// TORCH_LIBRARY registrations in the example sources. It defines no Python
// functions itself; the ops are reached through torch.ops.switchyard_examples.
#include <Python.h>

static PyModuleDef switchyard_examples_module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&switchyard_examples_module); }
