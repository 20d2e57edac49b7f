// concat: how the shader emitters build text.
#pragma once

#include <string>

namespace switchyard::shader::detail {

// The parts appended in order. The emitters build text with this wherever a
// temporary string would follow: "text" + std::string&& (and string&& +
// string&&) insert at the front of the temporary, and g++ 12 at -O3 reports
// a false -Wrestrict for that insert (GCC PR 105329) in every user TU that
// emits a shader. Appending does not trip it.
template <typename... Parts>
std::string concat(Parts const&... parts) {
    std::string s;
    (s += ... += parts);
    return s;
}

}  // namespace switchyard::shader::detail
