// The parameters of an index that follow from the size rule it serves, set once both are
// known (the registry after reading the user's parameters; a preset's make_config): the least
// chunk size of the tree's and the fine bins' least-size fronts, the fine bins' base (unless
// one was given), and TF's bins' size step (their address bitmaps take the sizes the rule
// makes, a granule apart).
#pragma once

#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fraglab {

template <class IndexParams, class SizeRule>
void fit_index_to_size_rule(IndexParams& ix, SizeRule const& size, bool bin_base_given = false)
{
  std::size_t const least = size.round(0).value_or(size.granule());
  if constexpr (std::is_same_v<IndexParams, fine_bins_index_params>) {
    if (!bin_base_given) {
      // The bins start at the smallest chunk's power of two, which must exist.
      if (least > (std::size_t{1} << 63))
        throw std::invalid_argument("fine_bins: the smallest chunk, " + std::to_string(least) +
                                    " bytes, has no power of two above it to start the bins at: lower min_size");
      ix.bin_base = std::bit_ceil(std::max<std::size_t>(least, fine_bins_index::bins_per_doubling));
    }
  }
  if constexpr (requires { ix.least_size; }) ix.least_size = least;
  if constexpr (std::is_same_v<IndexParams, bins_index_params>) ix.size_step = size.granule();
}

}  // namespace fraglab
