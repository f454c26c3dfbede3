// When a chunk larger than the request is found, whether to cut off the remainder as a
// new free chunk (the allocation keeps the low part) or hand out the whole chunk.
//
// One rule covers the allocators fraglab reproduces by its parameters: split iff
//   splitting is enabled, and the request is below max_split_size, and
//   remainder >= min_remainder, and
//   (chunk >= ratio * request  or  remainder >= max_internal_fragmentation).
//
// | setting                                | parameters                                           |
// |----------------------------------------|------------------------------------------------------|
// | never split                            | enabled = false                                      |
// | classic (remainder can hold a block)   | min_remainder = minimum block                       |
// | TF BFC                                 | ratio = 2, max_internal_fragmentation = 128 MiB      |
// | PyTorch small pool                     | min_remainder = 512                                  |
// | PyTorch large pool                     | min_remainder = 1 MiB + 1, max_split_size            |
#pragma once

#include <fraglab/policies/rule_parameter.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <string_view>
#include <tuple>

namespace fraglab {

struct threshold_split {
  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

  bool enabled = true;
  std::size_t min_remainder = 0;  // 0: any non-empty remainder qualifies
  double ratio = 1.0;             // split when chunk >= ratio * request (1: always)
  std::size_t max_internal_fragmentation = unlimited;
  std::size_t max_split_size = unlimited;  // requests this large never split (PyTorch)

  [[nodiscard]] bool should_split(std::size_t chunk, std::size_t request) const noexcept
  {
    if (!enabled || chunk <= request || request >= max_split_size) return false;
    std::size_t const remainder = chunk - request;
    if (remainder < min_remainder) return false;
    if (remainder >= max_internal_fragmentation || ratio <= 1.0) return true;
    // Integer arithmetic for TF's ratio (chunk >= 2 * request), which every replay under
    // tf_bfc asks; x87 long double, exact for any other ratio, costs 20 instructions.
    if (ratio == 2.0) return remainder >= request;
    return static_cast<long double>(chunk) >= static_cast<long double>(ratio) * static_cast<long double>(request);
  }

  static threshold_split never() { return threshold_split{.enabled = false}; }

  static constexpr std::string_view part = "split";
  static constexpr std::array<std::string_view, 2> enabled_words{"never", "threshold"};
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("split", &threshold_split::enabled, "threshold (see the keys below) or never", enabled_words),
        parameter("min_remainder", &threshold_split::min_remainder, "split only when the remainder is at least this (0: any remainder)"),
        parameter("split_ratio", &threshold_split::ratio, "split only when chunk >= split_ratio x request (or the next key holds)"),
        parameter("max_internal_fragmentation", &threshold_split::max_internal_fragmentation,
                  "split anyway when the remainder is at least this (TF)"),
        parameter("max_split_size", &threshold_split::max_split_size, "requests at least this large are never split (PyTorch)"),
    };
  }
};

}  // namespace fraglab
