#pragma once
// The IR text printer. Its output parses back (parser.h) into a graph that prints identically.
//
//   graph(%x : Float(3, 4),
//         %w : Float(4, 5)):
//     %y : Float(3, 5) = aten::mm(%x, %w)
//     return (%y)
#include "ir/graph.h"

#include <iosfwd>
#include <string>

namespace gj {

std::string printIR(const Graph& g);
void printIR(std::ostream& os, const Graph& g);
/// One node on one line (blocks omitted), with the same value names printIR(g) would use.
std::string printNode(const Node* n);
/// The text of a constant value as it appears in `[value=...]`.
std::string constantStr(const ConstantValue& v);

}  // namespace gj
