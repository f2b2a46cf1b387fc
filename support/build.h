#pragma once
// How this build was made, for defaults that differ between debug and release builds.

namespace gj {

#ifdef NDEBUG
constexpr bool kDebugBuild = false;
#else
constexpr bool kDebugBuild = true;
#endif

}  // namespace gj
