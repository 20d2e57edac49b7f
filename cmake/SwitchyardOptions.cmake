# switchyard_feature(NAME DOC): a tri-state option SWITCHYARD_BUILD_<NAME>
# (AUTO, ON, OFF; default AUTO) and its result SWITCHYARD_HAVE_<NAME>.
# AUTO enables the feature when its dependency is found; ON fails the
# configure when it is missing.
include(CheckLanguage)

function(_switchyard_detect name out)
    set(found FALSE)
    if(name STREQUAL "CUDA")
        check_language(CUDA)
        if(CMAKE_CUDA_COMPILER)
            set(found TRUE)
        endif()
    elseif(name STREQUAL "TORCH")
        # Ask the Python interpreter where torch keeps its CMake package;
        # find_package(Torch) itself runs where the feature is used.
        find_package(Python3 QUIET COMPONENTS Interpreter)
        if(Python3_Interpreter_FOUND)
            execute_process(
                COMMAND "${Python3_EXECUTABLE}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
            if(rc EQUAL 0 AND EXISTS "${prefix}")
                set(SWITCHYARD_TORCH_PREFIX "${prefix}" CACHE PATH "torch's CMake prefix" FORCE)
                set(found TRUE)
            endif()
        endif()
    elseif(name STREQUAL "WEBGPU")
        find_package(WebGPU QUIET)
        if(WebGPU_FOUND)
            set(found TRUE)
        endif()
    endif()
    set(${out} ${found} PARENT_SCOPE)
endfunction()

function(switchyard_feature name doc)
    set(SWITCHYARD_BUILD_${name} AUTO CACHE STRING "${doc}: AUTO, ON or OFF")
    set_property(CACHE SWITCHYARD_BUILD_${name} PROPERTY STRINGS AUTO ON OFF)
    string(TOUPPER "${SWITCHYARD_BUILD_${name}}" value)
    if(NOT value MATCHES "^(AUTO|ON|OFF)$")
        message(FATAL_ERROR "SWITCHYARD_BUILD_${name} must be AUTO, ON or OFF, not '${value}'")
    endif()
    set(have FALSE)
    if(NOT value STREQUAL "OFF")
        _switchyard_detect(${name} found)
        if(found)
            set(have TRUE)
        elseif(value STREQUAL "ON")
            message(FATAL_ERROR "SWITCHYARD_BUILD_${name}=ON but its dependency was not found (${doc})")
        endif()
    endif()
    set(SWITCHYARD_HAVE_${name} ${have} PARENT_SCOPE)
    message(STATUS "switchyard: ${name} ${value} -> ${have} (${doc})")
endfunction()
