#include "experiments/registry/composition.hpp"
#include "experiments/registry/cuda_backends.hpp"
#include "experiments/registry/instantiations.hpp"
#include "policies/presets/classic.hpp"
#include "policies/presets/rmm_pool.hpp"
#include "policies/presets/tlsf.hpp"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>

namespace fraglab {
namespace {

constexpr auto names = std::to_array<named_composition>({
    {"first_fit", "ao_tree", "first", presets::classic::defaults, "classic address-ordered first fit (J&W 1998), O(log n)"},
    {"first_fit_lifo", "list_lifo", "first", presets::classic::defaults, "classic first fit over a LIFO free list"},
    {"first_fit_fifo", "list_fifo", "first", presets::classic::defaults, "classic first fit over a FIFO free list"},
    {"next_fit", "ao_tree", "next", presets::classic::defaults, "classic address-ordered next fit, O(log n)"},
    {"best_fit", "fine_bins", "best", presets::classic::defaults, "classic best fit (lowest address on ties), O(log n)"},
    {"worst_fit", "tree", "worst", presets::classic::defaults, "classic worst fit"},
    {"buddy", "tree", "best", presets::classic::buddy_defaults, "binary buddy system: power-of-two blocks, buddy-only merging"},
    {"segregated_pow2", "list_lifo", "first", presets::classic::segregated_pow2_defaults,
     "simple segregated storage: power-of-two classes, pages per class, no splitting or coalescing"},
    {"tlsf", "seglist", "good", presets::tlsf::defaults, "TLSF (Masmano et al. 2004): two-level segregated good fit, O(1)"},
    {"rmm_pool", "tree", "best", presets::rmm::defaults, "RMM pool_memory_resource: 256 B, best fit, grows by the pool size"},
    {"bins_best", "bins", "best", "", "TF BFC's shape: 21 power-of-two bins, best fit by (size, address)"},
    {"bins_worst", "bins", "worst", "", "size-class bins, largest chunk"},
    {"tree_best", "tree", "best", "", "one red-black tree by (size, address), best fit"},
    {"tree_worst", "tree", "worst", "", "one red-black tree by (size, address), worst fit"},
    {"ao_first", "ao_tree", "first", "", "address-ordered first fit in O(log n) (augmented tree)"},
    {"ao_next", "ao_tree", "next", "", "address-ordered next fit in O(log n) (augmented tree)"},
    {"ao_worst", "ao_tree", "worst", "", "augmented address-ordered tree, worst fit"},
    {"seg_good", "seglist", "good", "", "TLSF-shaped segregated lists, good fit in O(1)"},
    {"seg_best", "seglist", "best", "", "segregated lists, exact best fit"},
    {"list_ao_first", "list_ao", "first", "", "classic address-ordered list, first fit (O(n) scan)"},
    {"list_ao_next", "list_ao", "next", "", "classic address-ordered list, next fit (O(n) scan)"},
    {"list_ao_best", "list_ao", "best", "", "classic address-ordered list, best fit (O(n) scan)"},
    {"list_ao_worst", "list_ao", "worst", "", "classic address-ordered list, worst fit (O(n) scan)"},
    {"list_lifo_first", "list_lifo", "first", "", "classic LIFO list, first fit"},
    {"list_fifo_first", "list_fifo", "first", "", "classic FIFO list, first fit"},
    {"list_lifo_next", "list_lifo", "next", "", "classic LIFO list, next fit"},
});

template <class F>
void for_each_instantiation(F&& f)
{
  for (auto const& i : registry_detail::tree_instantiations()) f(i);
  for (auto const& i : registry_detail::seglist_instantiations()) f(i);
  for (auto const& i : registry_detail::list_instantiations()) f(i);
}

registry_detail::preset const* find_preset(std::string_view name)
{
  for (auto const& p : registry_detail::preset_instantiations())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string_view> split_commas(std::string_view s)
{
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    std::size_t const comma = s.find(',');
    parts.push_back(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
  }
  return parts;
}

void apply_assignments(param_set& p, std::string_view list)
{
  for (std::string_view kv : split_commas(list))
    if (!kv.empty()) p.set_assignment(kv);
}

constexpr std::string_view compose_prefix = "compose:";

struct composed_spec {
  std::string_view index, fit;
  param_set params;  // the spec's other KEY=VALUE assignments
};

// A compose: spec taken apart; std::nullopt for a policy name.
std::optional<composed_spec> parse_compose(std::string_view spec)
{
  if (!spec.starts_with(compose_prefix)) return std::nullopt;
  composed_spec out;
  for (std::string_view kv : split_commas(spec.substr(compose_prefix.size()))) {
    std::size_t const eq = kv.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("in '" + std::string(spec) + "': expected KEY=VALUE, got '" + std::string(kv) + "'");
    std::string_view const key = kv.substr(0, eq);
    // One value a key: with two, the spec (which names the rows) would say both.
    if ((key == "index" && !out.index.empty()) || (key == "fit" && !out.fit.empty()) || out.params.has(key))
      throw std::invalid_argument("in '" + std::string(spec) + "': " + std::string(key) + " is given twice");
    if (key == "index") out.index = kv.substr(eq + 1);
    else if (key == "fit") out.fit = kv.substr(eq + 1);
    else out.params.set(key, kv.substr(eq + 1));
  }
  if (out.index.empty() || out.fit.empty())
    throw std::invalid_argument("'" + std::string(spec) + "' must name index=... and fit=...");
  return out;
}

}  // namespace

std::optional<index_fit_pair> composed_pair(std::string_view spec)
{
  std::optional<composed_spec> const composed = parse_compose(spec);
  if (!composed) return std::nullopt;
  return index_fit_pair{composed->index, composed->fit};
}

std::span<named_composition const> named_compositions() { return names; }

std::vector<preset_description> preset_list()
{
  std::vector<preset_description> out;
  for (auto const& p : registry_detail::preset_instantiations()) out.push_back({p.name, p.description});
  return out;
}

std::vector<index_fit_pair> composable_pairs()
{
  std::vector<index_fit_pair> pairs;
  for_each_instantiation([&](registry_detail::instantiation const& i) { pairs.push_back({i.index, i.fit}); });
  return pairs;
}

std::unique_ptr<composition> make_composition(std::string_view spec, param_set const& user, backend_choice const& chosen)
{
  backend_choice const backend = registry_detail::with_device_capacity(chosen, user);
  std::string_view index, fit;
  param_set params;
  if (std::optional<composed_spec> composed = parse_compose(spec)) {
    index = composed->index;
    fit = composed->fit;
    params = std::move(composed->params);
  } else if (auto const* preset = find_preset(spec)) {
    return preset->make(std::string(spec), user, backend);
  } else {
    named_composition const* found = nullptr;
    for (auto const& n : names)
      if (n.name == spec) found = &n;
    if (found == nullptr) {
      std::string known;
      for (auto const& p : registry_detail::preset_instantiations()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      for (auto const& n : names) known += ", " + std::string(n.name);
      throw std::invalid_argument("unknown policy '" + std::string(spec) + "' (known: " + known +
                                  "; or compose:index=I,fit=F,...)");
    }
    index = found->index;
    fit = found->fit;
    param_set defaults;
    apply_assignments(defaults, found->defaults);
    params = defaults;
  }
  param_set const merged = params.merged_with(user);
  registry_detail::composition_factory make = nullptr;
  for_each_instantiation([&](registry_detail::instantiation const& i) {
    if (i.index == index && i.fit == fit) make = i.make;
  });
  if (make == nullptr) {
    std::string pairs;
    for (auto const& p : composable_pairs())
      pairs += (pairs.empty() ? "" : ", ") + std::string(p.index) + "/" + std::string(p.fit);
    throw std::invalid_argument("no composition of index '" + std::string(index) + "' with fit '" + std::string(fit) +
                                "' (composable: " + pairs + ")");
  }
  return make(std::string(spec), merged, backend);
}

}  // namespace fraglab
