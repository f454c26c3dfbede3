#include <fraglab/runtime/registry/composition_impl.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>

namespace fraglab::registry_detail {

// best_fit's and first_fit's pairs fix immediate coalescing in their type where it is asked
// for, as tlsf's does (instantiate_seglists.cpp); buddy's pair fixes buddy merging.
template <>
inline constexpr composition_factory factory_for<fine_bins_index, best_fit> =
    &make_with_immediate_coalescing<fine_bins_index, best_fit>;
template <>
inline constexpr composition_factory factory_for<address_ordered_tree_index, first_fit> =
    &make_with_immediate_coalescing<address_ordered_tree_index, first_fit>;

template <>
inline constexpr composition_factory factory_for<tree_index, best_fit> =
    &make_with_fixed_coalescing<tree_index, best_fit, coalesce_mode::buddy>;

std::span<instantiation const> tree_instantiations()
{
  static constexpr auto table = instantiations_of(compositions::bins_and_trees{});
  return table;
}

}  // namespace fraglab::registry_detail
