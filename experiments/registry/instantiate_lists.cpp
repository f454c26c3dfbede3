#include "experiments/registry/composition_impl.hpp"
#include "experiments/registry/instantiations.hpp"
#include "policies/indexes/list_index.hpp"

#include <array>

namespace fraglab::registry_detail {

std::span<instantiation const> list_instantiations()
{
  static constexpr auto table = std::to_array<instantiation>({
      {"list_lifo", "first", &make_composition_of<lifo_list_index, first_fit>},
      {"list_lifo", "next", &make_composition_of<lifo_list_index, next_fit>},
      {"list_lifo", "best", &make_composition_of<lifo_list_index, best_fit>},
      {"list_lifo", "worst", &make_composition_of<lifo_list_index, worst_fit>},
      {"list_fifo", "first", &make_composition_of<fifo_list_index, first_fit>},
      {"list_fifo", "next", &make_composition_of<fifo_list_index, next_fit>},
      {"list_fifo", "best", &make_composition_of<fifo_list_index, best_fit>},
      {"list_fifo", "worst", &make_composition_of<fifo_list_index, worst_fit>},
      {"list_ao", "first", &make_composition_of<address_ordered_list_index, first_fit>},
      {"list_ao", "next", &make_composition_of<address_ordered_list_index, next_fit>},
      {"list_ao", "best", &make_composition_of<address_ordered_list_index, best_fit>},
      {"list_ao", "worst", &make_composition_of<address_ordered_list_index, worst_fit>},
  });
  return table;
}

}  // namespace fraglab::registry_detail
