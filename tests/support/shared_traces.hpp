// The real traces beside the checkout (shared/traces/README.md), where FRAGLAB_SHARED_TRACES
// says, which `meson test` sets from the shared_traces option: tests that use them skip,
// saying so, where they are absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fraglab::testing {

// The folder `sub` of the shared traces (e.g. "pytorch"), or empty where it is absent.
inline std::filesystem::path shared_traces(std::string const& sub)
{
  char const* const root = std::getenv("FRAGLAB_SHARED_TRACES");
  if (root == nullptr || *root == '\0') return {};
  std::filesystem::path const p = std::filesystem::path(root) / sub;
  return std::filesystem::is_directory(p) ? p : std::filesystem::path{};
}

}  // namespace fraglab::testing
