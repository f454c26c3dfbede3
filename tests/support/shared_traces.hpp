// The real traces beside the checkout (../shared/traces, shared/traces/README.md): tests that
// use them look there, from the build folder or the source root, and skip, saying so, where
// they are absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fraglab::testing {

// The folder `sub` of ../shared/traces (e.g. "pytorch"), or empty where it is absent.
inline std::filesystem::path shared_traces(std::string const& sub)
{
  for (char const* up : {"../", "../../", "../../../"}) {
    std::filesystem::path const p = std::string(up) + "shared/traces/" + sub;
    if (std::filesystem::is_directory(p)) return p;
  }
  if (char const* src = std::getenv("MESON_SOURCE_ROOT"); src != nullptr) {
    auto const p = std::filesystem::path(src) / "../shared/traces" / sub;
    if (std::filesystem::is_directory(p)) return p;
  }
  return {};
}

}  // namespace fraglab::testing
