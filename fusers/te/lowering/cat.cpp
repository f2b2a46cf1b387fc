// aten::cat at a group's outputs (fusers/te/lowering/nests.h): each part stored into its slice of the
// output, by the nest of the part's kind.
#include "fusers/te/lowering/nests.h"

#include "passes/util.h"

namespace gj::te::lowering {

std::vector<std::pair<const Value*, Slice>> catParts(const Node* cat, const Buf& out) {
  const Node* list = cat->input(0)->node();
  USER_CHECK(list->kind() == OpKind::ListConstruct, "TE lowering: aten::cat needs a prim::ListConstruct");
  auto d = constantInt(cat->input(1));
  USER_CHECK(d.has_value(), "TE lowering: aten::cat needs a constant dim");
  const int64_t dim = *d < 0 ? *d + static_cast<int64_t>(out->dims.size()) : *d;
  std::vector<std::pair<const Value*, Slice>> parts;
  int64_t offset = 0;
  for (const Value* part : list->inputs()) {
    parts.push_back({part, Slice{out, dim, offset}});
    offset += (*staticSizes(part))[dim];
  }
  return parts;
}

}  // namespace gj::te::lowering
