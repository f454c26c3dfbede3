// The (index, fit) pairs compiled into the registry, spread over several translation units
// so that the build uses every core.
#pragma once

#include "experiments/registry/composition.hpp"

#include <span>
#include <string_view>

namespace fraglab::registry_detail {

using composition_factory = std::unique_ptr<composition> (*)(std::string, param_set const&, backend_choice const&);

struct instantiation {
  std::string_view index;
  std::string_view fit;
  composition_factory make;
};

std::span<instantiation const> tree_instantiations();     // bins, tree, ao_tree
std::span<instantiation const> seglist_instantiations();  // seglist
std::span<instantiation const> list_instantiations();     // list_lifo, list_fifo, list_ao

struct preset {
  std::string_view name;
  std::string_view description;
  composition_factory make;
};
std::span<preset const> preset_instantiations();

}  // namespace fraglab::registry_detail
