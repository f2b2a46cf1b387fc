// libFuzzer target: the IR parser and, behind it, the verifier (parseIR verifies what it parses), and for
// TorchScript's text the frontend passes (lowerTorchScript), whose result must verify too; then the
// TorchScript export (exportTorchScript), whose result must verify, print, and parse back.
// Any input may be rejected with a gj::Error; anything else escaping (another exception, a crash, a
// sanitizer report) is a bug. A graph that is accepted must print back to text that parses again
// and prints the same: the printer and parser agree on every graph the parser lets through.
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/frontend.h"
#include "support/error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<gj::Graph> g;
  try {
    g = gj::parseIR(text, "<fuzz>");
  } catch (const gj::Error&) {
    return 0;
  }
  std::string printed = gj::printIR(*g);
  if (!gj::verify(*g).empty()) {
    std::fprintf(stderr, "the parser accepted a graph the verifier rejects:\n%s\n", printed.c_str());
    std::abort();
  }
  std::string again;
  try {
    again = gj::printIR(*gj::parseIR(printed, "<printed>"));
  } catch (const gj::Error& e) {
    std::fprintf(stderr, "printed IR does not parse: %s\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  if (again != printed) {
    std::fprintf(stderr, "print -> parse -> print changed the text:\n%s\n---\n%s\n", printed.c_str(),
                 again.c_str());
    std::abort();
  }
  if (gj::hasTorchScriptForms(*g)) {
    try {
      gj::lowerTorchScript(*g);
    } catch (const gj::Error&) {
      return 0;
    }
    if (!gj::verify(*g).empty()) {
      std::fprintf(stderr, "lower-torchscript made a graph the verifier rejects:\n%s\n---\n%s\n", printed.c_str(),
                   gj::printIR(*g).c_str());
      std::abort();
    }
  }
  try {
    gj::exportTorchScript(*g);
  } catch (const gj::Error&) {
    return 0;  // an op PyTorch has no form of
  }
  std::string exported = gj::printIR(*g);
  if (!gj::verify(*g).empty()) {
    std::fprintf(stderr, "export-torchscript made a graph the verifier rejects:\n%s\n---\n%s\n",
                 printed.c_str(), exported.c_str());
    std::abort();
  }
  std::unique_ptr<gj::Graph> back;
  try {
    back = gj::parseIR(exported, "<exported>");
  } catch (const gj::Error& e) {
    std::fprintf(stderr, "exported text does not parse: %s\n%s\n", e.what(), exported.c_str());
    std::abort();
  }
  try {
    gj::lowerTorchScript(*back);  // may refuse what the fuzzer's graph does (a check that always fails)
  } catch (const gj::Error&) {
  }
  return 0;
}
