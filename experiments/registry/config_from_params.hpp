// Turns a param_set into the runtime configuration of each part, and into a backend.
#pragma once

#include "backends/any_backend.hpp"
#include "experiments/params/param_set.hpp"
#include "experiments/params/rule_parameters.hpp"
#include "experiments/registry/composition.hpp"
#include "policies/indexes/bins_index.hpp"
#include "policies/indexes/fine_bins_index.hpp"
#include "policies/indexes/index_for_size_rule.hpp"
#include "policies/coalesce_rules.hpp"
#include "policies/growth_rules.hpp"
#include "policies/pool_rules.hpp"
#include "policies/indexes/segregated_index.hpp"
#include "policies/indexes/tree_index.hpp"
#include "policies/size_rules.hpp"
#include "policies/split_rules.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fraglab::registry_detail {

// What rule_from_params alone (experiments/params/rule_parameters.hpp) does not: split_ratio's
// bound, and the fine bins' keys taken only where given.
threshold_split split_from_params(param_set const& p);
// Only what the parameters give: fit_index_to_size_rule derives the rest.
fine_bins_index_params fine_bins_from_params(param_set const& p);
any_backend make_backend(backend_choice const& b, param_set const& p);

// The parameters that build `c` where they differ from the parameter table's defaults: how a
// preset written as a C++ config (policies/presets/) gives its name's defaults in the registry,
// so that they are written once, in the preset.
template <class Config>
param_set preset_defaults(Config const& c)
{
  param_set mine = params_of_rule(c.split)
                       .merged_with(params_of_rule(coalescing{c.coalesce.mode}))
                       .merged_with(params_of_rule(c.growth))
                       .merged_with(params_of_rule(c.size))
                       .merged_with(params_of_rule(c.pools));
  // The indexes whose parameters are keys of their own: TF's bins and the segregated lists.
  // (The fine bins' base and count follow the size rule unless given; the others have none.)
  using index_params = std::remove_cvref_t<decltype(c.index)>;
  if constexpr (std::is_same_v<index_params, bins_index_params> || std::is_same_v<index_params, segregated_index_params>)
    mine = mine.merged_with(params_of_rule(c.index));
  param_set const table;
  param_set out;
  for (auto const& [key, value] : mine.values())
    if (value != table.text(key)) out.set(key, value);
  return out;
}

template <class Alloc>
typename Alloc::config config_from_params(param_set const& p)
{
  typename Alloc::config c;
  using index_params = typename Alloc::index_spec::params;
  if constexpr (std::is_same_v<index_params, bins_index_params> || std::is_same_v<index_params, segregated_index_params>)
    c.index = rule_from_params<index_params>(p);
  c.split = split_from_params(p);
  if constexpr (std::is_same_v<decltype(c.coalesce), coalescing>) c.coalesce = rule_from_params<coalescing>(p);
  else if (rule_from_params<coalescing>(p).mode != c.coalesce.mode)
    throw std::invalid_argument("parameter coalesce: this composition's type fixes it to " +
                                std::string(to_string(c.coalesce.mode)));
  c.growth = rule_from_params<growth_rule>(p);
  c.size = rule_from_params<quantum_size_rule>(p);
  c.pools = rule_from_params<stream_pool_rule>(p);
  c.pools.validate();
  c.size.validate();
  c.growth.validate();
  if constexpr (std::is_same_v<index_params, fine_bins_index_params>) c.index = fine_bins_from_params(p);
  fit_index_to_size_rule(c.index, c.size, p.has("bin_base"));
  return c;
}

}  // namespace fraglab::registry_detail
