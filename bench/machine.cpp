#include "bench/machine.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace gj::bench {

namespace {

// The machine's busy and total clock ticks over all CPUs (the first line of /proc/stat).
std::optional<std::pair<uint64_t, uint64_t>> cpuTicks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu")
    return std::nullopt;
  const uint64_t busy = user + nice + system + irq + softirq + steal;
  return std::pair{busy, busy + idle + iowait};
}

// This process's user and system clock ticks (fields 14 and 15 of /proc/self/stat).
std::optional<uint64_t> ownTicks() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  size_t close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int f = 3; f < 14; ++f) fields >> skip;
  uint64_t utime, stime;
  if (!(fields >> utime >> stime)) return std::nullopt;
  return utime + stime;
}

}  // namespace

int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::optional<double> otherProcessesBusyCores(int sampleMs) {
  auto machine0 = cpuTicks();
  auto own0 = ownTicks();
  std::this_thread::sleep_for(std::chrono::milliseconds(sampleMs));
  auto machine1 = cpuTicks();
  auto own1 = ownTicks();
  if (!machine0 || !machine1 || !own0 || !own1) return std::nullopt;
  const double total = static_cast<double>(machine1->second - machine0->second);
  if (total <= 0) return std::nullopt;
  const double busy = static_cast<double>(machine1->first - machine0->first) - static_cast<double>(*own1 - *own0);
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  return std::max(0.0, busy / total * cores);
}

std::optional<uint64_t> runQueueWaitNs() {
  std::error_code ec;
  uint64_t sum = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    uint64_t onCpu, waiting;
    if (!(in >> onCpu >> waiting)) continue;  // a thread that just ended
    sum += waiting;
    any = true;
  }
  if (ec || !any) return std::nullopt;
  return sum;
}

std::string describeMachine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return "Machine: " + model + ", " + std::to_string(availableCores()) + " cores available";
}

}  // namespace gj::bench
