// Exact-or-worst fit: an exact fit when one exists, otherwise the largest chunk
// (Wilson et al. 1995, section 3.5, discuss both halves).
#pragma once
#include <cstddef>
#include <string_view>

namespace fraglab {

struct exact_or_worst_fit {
  static constexpr std::string_view name = "exact_or_worst";

  template <class Ix>
  static auto* select(Ix& ix, std::size_t n)
    requires requires { ix.find_best(n); ix.largest(); }
  {
    auto* best = ix.find_best(n);
    if (best == nullptr || best->size == n) return best;  // nothing fits, or an exact fit
    return ix.largest();  // at least as large as `best`, so it fits
  }
};

}  // namespace fraglab
