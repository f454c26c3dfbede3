#include <fraglab/runtime/registry/composition_impl.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>

namespace fraglab::registry_detail {

std::span<instantiation const> list_instantiations()
{
  static constexpr auto table = instantiations_of(compositions::lists{});
  return table;
}

}  // namespace fraglab::registry_detail
