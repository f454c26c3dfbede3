// Turns a param_set into the runtime configuration of each part, and into a backend.
#pragma once

#include <fraglab/backends/any_backend.hpp>
#include <fraglab/policies/coalesce_rules.hpp>
#include <fraglab/policies/growth_rules.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>
#include <fraglab/policies/indexes/index_for_size_rule.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/pool_rules.hpp>
#include <fraglab/policies/size_rules.hpp>
#include <fraglab/policies/split_rules.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/params/rule_parameters.hpp>
#include <fraglab/runtime/registry/composition.hpp>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace fraglab::registry_detail {

// What rule_from_params alone (experiments/runtime/params/rule_parameters.hpp) does not: split_ratio's
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

// The parts of a composition; every other part belongs to a preset.
inline constexpr std::array<std::string_view, 7> generic_parts{"backend", "index", "split", "coalesce",
                                                                "growth",  "size",  "pools"};

// The refusal of a key that policy `name` does not read, naming the preset the key belongs
// to where it is one preset's own.
[[noreturn]] void refuse_unread_key(std::string const& name, std::string const& key);

// Throws unless every key of `p` belongs to one of `parts`: a key the policy would not read
// is an error, never silently ignored. (make_composition checks every policy's keys more
// finely; this keeps a composition made outside the registry as strict.)
void check_keys(std::string const& name, param_set const& p, std::span<std::string_view const> parts);

}  // namespace fraglab::registry_detail
