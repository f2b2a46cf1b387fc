#pragma once
namespace gj {
/// Sets the number of CPU threads used by kernels and GEMM (OpenMP and OpenBLAS). n >= 1.
void setNumThreads(int n);
int numThreads();
}  // namespace gj
