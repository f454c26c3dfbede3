// Turns a param_set into the runtime configuration of each part, and into a backend.
#pragma once

#include "backends/any_backend.hpp"
#include "experiments/params/param_set.hpp"
#include "experiments/registry/composition.hpp"
#include "policies/indexes/bins_index.hpp"
#include "policies/indexes/fine_bins_index.hpp"
#include "policies/coalesce_rules.hpp"
#include "policies/growth_rules.hpp"
#include "policies/indexes/segregated_index.hpp"
#include "policies/indexes/tree_index.hpp"
#include "policies/size_rules.hpp"
#include "policies/split_rules.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fraglab::registry_detail {

threshold_split split_from_params(param_set const& p);
coalescing coalescing_from_params(param_set const& p);
growth_rule growth_from_params(param_set const& p);
quantum_size_rule size_from_params(param_set const& p);
bins_index_params bins_from_params(param_set const& p);
// Fine bins start at the least size the size rule makes, unless bin_base is set.
fine_bins_index_params fine_bins_from_params(param_set const& p, std::size_t least_size);
segregated_index_params seglist_from_params(param_set const& p);
any_backend make_backend(backend_choice const& b, param_set const& p);

template <class Alloc>
typename Alloc::config config_from_params(param_set const& p)
{
  typename Alloc::config c;
  using index_params = typename Alloc::index_spec::params;
  if constexpr (std::is_same_v<index_params, bins_index_params>) c.index = bins_from_params(p);
  else if constexpr (std::is_same_v<index_params, segregated_index_params>) c.index = seglist_from_params(p);
  c.split = split_from_params(p);
  if constexpr (std::is_same_v<decltype(c.coalesce), coalescing>) c.coalesce = coalescing_from_params(p);
  else if (coalescing_from_params(p).mode != c.coalesce.mode)
    throw std::invalid_argument("parameter coalesce: this composition's type fixes it to " +
                                std::string(to_string(c.coalesce.mode)));
  c.growth = growth_from_params(p);
  c.size = size_from_params(p);
  c.pools.per_stream = p.flag("per_stream");
  c.pools.size_class_pools = p.flag("size_class_pools");
  if (c.pools.per_stream && c.pools.size_class_pools)
    throw std::invalid_argument("per_stream and size_class_pools cannot be combined");
  c.size.validate();
  c.growth.validate();
  // The tree's and the fine bins' address bitmaps take the smallest chunk the size rule
  // makes; TF's bins' bitmaps take the sizes it makes, a granule apart.
  std::size_t const least = c.size.round(0).value_or(c.size.granule());
  if constexpr (std::is_same_v<index_params, fine_bins_index_params>) c.index = fine_bins_from_params(p, least);
  if constexpr (requires { c.index.least_size; }) c.index.least_size = least;
  if constexpr (std::is_same_v<index_params, bins_index_params>) c.index.size_step = c.size.granule();
  return c;
}

}  // namespace fraglab::registry_detail
