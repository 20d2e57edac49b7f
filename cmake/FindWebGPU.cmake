# FindWebGPU: a webgpu.h implementation (wgpu-native or Dawn).
#
# Looks, in order, at WebGPU_ROOT / $ENV{WebGPU_ROOT} (a folder holding
# webgpu.h or webgpu/webgpu.h and the library, directly or under include/ and
# lib/), then at the `wgpu` Python package (pip install wgpu), whose
# resources/ folder ships wgpu-native's webgpu.h, wgpu.h and
# libwgpu_native*.so. Defines WebGPU_FOUND, WebGPU_INCLUDE_DIR,
# WebGPU_LIBRARY and the imported target WebGPU::WebGPU.
include(FindPackageHandleStandardArgs)

set(_webgpu_hints "")
foreach(root IN ITEMS "${WebGPU_ROOT}" "$ENV{WebGPU_ROOT}")
    if(root)
        list(APPEND _webgpu_hints "${root}" "${root}/include" "${root}/lib" "${root}/resources")
    endif()
endforeach()
if(NOT WebGPU_INCLUDE_DIR OR NOT WebGPU_LIBRARY)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
        execute_process(
            COMMAND "${Python3_EXECUTABLE}" -c
                    "import importlib.util, os; s = importlib.util.find_spec('wgpu'); print(os.path.join(os.path.dirname(s.origin), 'resources') if s else '')"
            OUTPUT_VARIABLE _webgpu_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        if(_webgpu_wheel)
            list(APPEND _webgpu_hints "${_webgpu_wheel}")
        endif()
    endif()
endif()

find_path(WebGPU_INCLUDE_DIR NAMES webgpu.h webgpu/webgpu.h HINTS ${_webgpu_hints})
find_library(WebGPU_LIBRARY NAMES wgpu_native wgpu_native-release webgpu_dawn webgpu HINTS ${_webgpu_hints})
if(NOT WebGPU_LIBRARY)
    # The wheel's library name carries a suffix find_library does not try.
    foreach(dir IN LISTS _webgpu_hints)
        file(GLOB _webgpu_candidates "${dir}/libwgpu_native*.so" "${dir}/libwgpu_native*.dylib")
        if(_webgpu_candidates)
            list(GET _webgpu_candidates 0 _webgpu_first)
            set(WebGPU_LIBRARY "${_webgpu_first}" CACHE FILEPATH "webgpu.h implementation library" FORCE)
            break()
        endif()
    endforeach()
endif()

find_package_handle_standard_args(WebGPU REQUIRED_VARS WebGPU_LIBRARY WebGPU_INCLUDE_DIR)
if(WebGPU_FOUND AND NOT TARGET WebGPU::WebGPU)
    add_library(WebGPU::WebGPU UNKNOWN IMPORTED)
    set_target_properties(WebGPU::WebGPU PROPERTIES IMPORTED_LOCATION "${WebGPU_LIBRARY}"
                                                    INTERFACE_INCLUDE_DIRECTORIES "${WebGPU_INCLUDE_DIR}")
endif()
