// When free address neighbours merge.
//
// - immediate: on every free, with the previous and next chunk of the same region
//   (boundary-tag coalescing, Knuth TAOCP 2.5; what TF, PyTorch, dlmalloc and TLSF do).
// - deferred: frees leave neighbours apart; on a miss, every run of adjacent free chunks is
//   merged before the allocator grows (Wilson et al. 1995, section 3.9 "deferred coalescing").
// - never: chunks only ever get smaller (simple segregated storage).
//
// Chunks of different regions never merge: a region is one backend acquisition, or several
// adjacent ones where the backend allows merging.
#pragma once

#include <cstdint>
#include <string_view>

namespace fraglab {

enum class coalesce_mode : std::uint8_t { immediate, deferred, never };

struct coalescing {
  coalesce_mode mode = coalesce_mode::immediate;
};

constexpr std::string_view to_string(coalesce_mode m) noexcept
{
  switch (m) {
    case coalesce_mode::immediate: return "immediate";
    case coalesce_mode::deferred: return "deferred";
    case coalesce_mode::never: return "never";
  }
  return "?";
}

}  // namespace fraglab
