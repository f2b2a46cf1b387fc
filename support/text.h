#pragma once
// Words in messages: the closest of several names, for "did you mean".
#include <span>
#include <string>
#include <string_view>

namespace gj {

/// The candidate within a few edits of `word` (a third of its length, at least one; case is ignored), or
/// "" when none is.
std::string closestMatch(std::string_view word, std::span<const std::string> candidates);

/// "; did you mean 'X'?" for the closest candidate, or "" when none is close.
std::string didYouMean(std::string_view word, std::span<const std::string> candidates);

}  // namespace gj
