// Parses IR text, runs it through a Function with a context of its own (runtime/context.h) and prints the
// optimized graph; exits non-zero on a wrong result.
#include <graphjit/executors/function.h>
#include <graphjit/ir/parser.h>

#include <cmath>
#include <cstdio>
#include <memory>

int main() {
  const char* text = R"IR(graph(%x : Float(2, 3), %w : Float(3, 3)):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mm(%x, %w)
  %z : Tensor = aten::sigmoid(%y)
  %out : Tensor = aten::add(%z, %x, %one)
  return (%out)
)IR";
  try {
    auto g = gj::parseIR(text, "example.ir");
    auto context = std::make_shared<gj::Context>();  // its kernels and JIT session, apart from other Functions'
    gj::Function f(*g, {.fuser = gj::FuserKind::Legacy,
                        .executor = gj::ExecutorKind::Legacy,
                        .fuserOptions = {.context = context}});
    gj::Tensor x = gj::Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6});
    gj::Tensor w = gj::Tensor::fromVector({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});  // identity
    auto out = f.forward({x, w})[0].toTensor();
    double worst = 0;
    for (int64_t k = 0; k < 6; ++k) {
      double v = static_cast<double>(k + 1);
      worst = std::max(worst, std::abs(out.item(k) - (1 / (1 + std::exp(-v)) + v)));
    }
    std::printf("%s", f.optimizedGraph().c_str());
    std::printf("largest error: %.3g\n%s\n", worst, worst < 1e-6 ? "ok" : "MISMATCH");
    return worst < 1e-6 ? 0 : 1;
  } catch (const gj::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
