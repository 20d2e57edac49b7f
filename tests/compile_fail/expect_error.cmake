# Compiles SOURCE and passes only if compilation fails and the first error
# line contains the text given in SOURCE's "// expect: <text>" line.
file(STRINGS "${SOURCE}" expect_line REGEX "^// expect: ")
if(NOT expect_line)
    message(FATAL_ERROR "${SOURCE} has no '// expect: <text>' line")
endif()
string(REGEX REPLACE "^// expect: " "" expected "${expect_line}")

execute_process(
    COMMAND "${COMPILER}" -std=c++20 -fsyntax-only -I "${INCLUDE_DIR}" "${SOURCE}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()

string(REPLACE "\n" ";" lines "${err}")
set(first_error "")
foreach(line IN LISTS lines)
    if(line MATCHES "error")
        set(first_error "${line}")
        break()
    endif()
endforeach()
string(FIND "${first_error}" "${expected}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "first error of ${SOURCE} does not contain the expected text\n"
                        "expected: ${expected}\nfirst error: ${first_error}\nfull output:\n${err}")
endif()
message(STATUS "ok: ${first_error}")
