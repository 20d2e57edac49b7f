// A kernel for a shader tag with dtype f64 computes with value<double>, which
// no shading language has: switchyard's math says so, instead of failing
// overload resolution.
// expect: switchyard math on a shader device (webgpu, metal): dtype f64 has no shader type
#include <switchyard/shader/math.h>
switchyard::shader::value<double> root(switchyard::shader::value<double> const& x) { return switchyard::sqrt(x); }
