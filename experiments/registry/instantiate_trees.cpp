#include "experiments/registry/composition_impl.hpp"
#include "experiments/registry/instantiations.hpp"
#include "policies/indexes/address_ordered_tree_index.hpp"
#include "policies/indexes/bins_index.hpp"
#include "policies/indexes/fine_bins_index.hpp"
#include "policies/indexes/tree_index.hpp"

#include <array>

namespace fraglab::registry_detail {

// best_fit's and first_fit's pairs fix immediate coalescing in their type where it is asked
// for, as tlsf's does (instantiate_seglists.cpp).
std::span<instantiation const> tree_instantiations()
{
  static constexpr auto table = std::to_array<instantiation>({
      {"bins", "best", &make_composition_of<bins_index, best_fit>},
      {"fine_bins", "best", &make_with_immediate_coalescing<fine_bins_index, best_fit>},
      {"bins", "worst", &make_composition_of<bins_index, worst_fit>},
      {"tree", "best", &make_composition_of<tree_index, best_fit>},
      {"tree", "worst", &make_composition_of<tree_index, worst_fit>},
      {"ao_tree", "first", &make_with_immediate_coalescing<address_ordered_tree_index, first_fit>},
      {"ao_tree", "next", &make_composition_of<address_ordered_tree_index, next_fit>},
      {"ao_tree", "worst", &make_composition_of<address_ordered_tree_index, worst_fit>},
  });
  return table;
}

}  // namespace fraglab::registry_detail
