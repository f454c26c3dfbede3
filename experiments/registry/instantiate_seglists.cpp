#include "experiments/registry/composition_impl.hpp"
#include "experiments/registry/instantiations.hpp"
#include "policies/indexes/segregated_index.hpp"

#include <array>

namespace fraglab::registry_detail {

std::span<instantiation const> seglist_instantiations()
{
  static constexpr std::array<instantiation, 3> table{{
      {"seglist", "good", &make_composition_of<segregated_index, good_fit>},
      {"seglist", "best", &make_composition_of<segregated_index, best_fit>},
      {"seglist", "worst", &make_composition_of<segregated_index, worst_fit>},
  }};
  return table;
}

}  // namespace fraglab::registry_detail
