#pragma once
namespace gj {
/// Sets the number of CPU threads used by kernels and GEMM (OpenMP and OpenBLAS). n >= 1.
void setNumThreads(int n);
int numThreads();

/// While alive, OpenMP regions started on this thread (ours and oneDNN's) run on this thread alone: for
/// work too small to pay for waking the others (runtime/gemm.cpp's small products). Costs no system call.
/// `engaged` false leaves the thread count alone (a scope that applies to some calls only).
class OneThreadScope {
 public:
  explicit OneThreadScope(bool engaged = true);
  ~OneThreadScope();
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  int saved_;
};
}  // namespace gj
