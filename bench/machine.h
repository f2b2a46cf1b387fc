#pragma once
// How busy the machine is, for graphbench's honesty on shared machines: other processes' CPU use before
// a run, and the time this process's threads spent runnable but waiting for a CPU during one.
#include <cstdint>
#include <optional>
#include <string>

namespace gj::bench {

/// The cores that other processes kept busy over `sampleMs` (this process's own use subtracted), from
/// /proc/stat; nullopt where /proc cannot be read.
std::optional<double> otherProcessesBusyCores(int sampleMs = 300);

/// "Machine: <CPU model name>, N cores available" (from /proc/cpuinfo), for benchmark reports.
std::string describeMachine();

/// The CPUs this process may run on.
int availableCores();

/// Nanoseconds this process's threads have spent runnable but waiting for a CPU, summed over threads
/// (/proc/self/task/*/schedstat); nullopt where the kernel does not report it. Threads that ended are
/// not counted, so compare two readings taken while the same thread pool is alive.
std::optional<uint64_t> runQueueWaitNs();

}  // namespace gj::bench
