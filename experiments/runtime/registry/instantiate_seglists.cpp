#include <fraglab/runtime/registry/composition_impl.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>

namespace fraglab::registry_detail {
namespace {

// Good fit over TLSF's own mapping (sli 5, exact classes below 256 B) gets the index with
// that mapping in its type, the same decisions in fewer instructions
// (`Equivalence.FixedListMappingMakesTheSameDecisions`), and TLSF's immediate coalescing in
// its type too where it is asked for; any other mapping, the general one.
std::unique_ptr<composition> make_seglist_good(std::string name, param_set const& p, backend_choice const& b)
{
  if (tlsf_list_mapping::matches(rule_from_params<segregated_index_params>(p)))
    return make_with_immediate_coalescing<tlsf_segregated_index, good_fit>(std::move(name), p, b);
  return make_composition_of<segregated_index, good_fit>(std::move(name), p, b);
}

}  // namespace

template <>
inline constexpr composition_factory factory_for<segregated_index, good_fit> = &make_seglist_good;

std::span<instantiation const> seglist_instantiations()
{
  static constexpr auto table = instantiations_of(compositions::segregated{});
  return table;
}

}  // namespace fraglab::registry_detail
