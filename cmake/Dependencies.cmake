# Third-party libraries. Everything comes from Debian packages that scripts/build installs.
find_package(fmt REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)

# oneDNN (GJ_WITH_ONEDNN): without it float32 GEMMs go to OpenBLAS and the CPU `cudnn` row is missing,
# which is what the CUDA-only configuration for a GPU machine wants (scripts/build --cuda-only).
set(GJ_HAVE_ONEDNN OFF)
add_library(gj_dnnl INTERFACE)
if(NOT GJ_WITH_ONEDNN STREQUAL "OFF")
  find_path(DNNL_INCLUDE_DIR dnnl.h)
  find_library(DNNL_LIBRARY dnnl)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    set(GJ_HAVE_ONEDNN ON)
    target_include_directories(gj_dnnl SYSTEM INTERFACE ${DNNL_INCLUDE_DIR})
    target_link_libraries(gj_dnnl INTERFACE ${DNNL_LIBRARY})
  elseif(GJ_WITH_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "GJ_WITH_ONEDNN=ON but oneDNN was not found (apt-get install libdnnl-dev)")
  endif()
endif()

find_path(OPENBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread
          /usr/include/openblas NO_DEFAULT_PATH)
find_path(OPENBLAS_INCLUDE_DIR cblas.h REQUIRED)
find_library(OPENBLAS_LIBRARY openblas REQUIRED)
add_library(gj_openblas INTERFACE)
target_include_directories(gj_openblas SYSTEM INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(gj_openblas INTERFACE ${OPENBLAS_LIBRARY})

set(GJ_HAVE_LLVM OFF)
if(NOT GJ_WITH_LLVM STREQUAL "OFF")
  find_package(LLVM 19.1 CONFIG PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
  if(LLVM_FOUND)
    set(GJ_HAVE_LLVM ON)
  elseif(GJ_WITH_LLVM STREQUAL "ON")
    message(FATAL_ERROR "GJ_WITH_LLVM=ON but LLVM 19.1 was not found (apt-get install llvm-19-dev libzstd-dev)")
  endif()
endif()

set(GJ_HAVE_CUDA OFF)
if(NOT GJ_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(GJ_HAVE_CUDA ON)
    # The emulated driver's fibers (runtime/cuda/emulator_scheduler.cpp).
    find_package(Boost REQUIRED COMPONENTS context)
  elseif(GJ_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GJ_WITH_CUDA=ON but the CUDA toolkit was not found")
  endif()
endif()

find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3 CONFIG REQUIRED)
