// When free address neighbours merge.
//
// - immediate: on every free, with the previous and next chunk of the same region
//   (boundary-tag coalescing, Knuth TAOCP 2.5; what TF, PyTorch, dlmalloc and TLSF do).
// - deferred: frees leave neighbours apart; on a miss, every run of adjacent free chunks is
//   merged before the allocator grows (Wilson et al. 1995, section 3.9 "deferred coalescing").
// - never: chunks only ever get smaller (simple segregated storage).
// - buddy: the binary buddy system (Knowlton 1965; Knuth TAOCP 2.5): every chunk is a power
//   of two at an offset from its region's base that is a multiple of its size; a request
//   takes a chunk of at least its size rounded up to a power of two, halved until it fits
//   exactly (the upper halves become free chunks; the split rule is not consulted); a free
//   chunk merges only with its buddy, the other half of the chunk it was split from, while
//   that is free and whole. Regions are never merged, so offsets stay meaningful.
//
// Chunks of different regions never merge: a region is one backend acquisition, or several
// adjacent ones where the backend allows merging.
#pragma once

#include <fraglab/engine/part_interface.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <array>
#include <cstdint>
#include <string_view>
#include <tuple>

namespace fraglab {

// The mode as a runtime parameter: compositions take it from `--set coalesce=...`.
struct coalescing {
  coalesce_mode mode = coalesce_mode::immediate;

  static constexpr std::string_view part = "coalesce";
  static constexpr auto parameters()
  {
    return std::tuple{parameter("coalesce", &coalescing::mode,
                                "immediate, deferred (until a miss), never, or buddy (binary buddy: halving splits, buddy-only merges)",
                                coalesce_mode_names)};
  }
};

// The mode fixed at compile time, for presets whose allocator knows only one (TF's BFC,
// PyTorch's caching allocator and dlmalloc coalesce immediately, with no option to do
// otherwise): every test of the mode in the hot paths folds to a constant. The engine reads
// `mode` alike from both (docs/performance.md, "Structure fixed in the type").
template <coalesce_mode M>
struct fixed_coalescing {
  static constexpr coalesce_mode mode = M;
};

}  // namespace fraglab
