// The (index, fit) pairs compiled into the registry, spread over several translation units
// so that the build uses every core.
#pragma once

#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>

#include <array>
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
  std::string_view header;    // where its rules, and those it leaves out, are written
  std::string_view part;      // its own keys' part in the parameter table
  std::span<std::string_view const> shared_keys;  // keys of the generic parts it reads too
  std::string_view defaults;  // KEY=VALUE,...: its defaults where they are not the table's
  composition_factory make;
};
std::span<preset const> preset_instantiations();

}  // namespace fraglab::registry_detail
