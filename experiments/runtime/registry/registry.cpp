#include <fraglab/policies/presets/classic.hpp>
#include <fraglab/policies/presets/rmm_pool.hpp>
#include <fraglab/policies/presets/tlsf.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>
#include <fraglab/runtime/registry/cuda_backends.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>

#include <fraglab/runtime/params/closest_name.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>

namespace fraglab {
namespace {

// The named compositions' defaults, from their presets' C++ configs (policies/presets/).
template <class Policy>
param_set classic_defaults()
{
  return registry_detail::preset_defaults(presets::classic::make_config<Policy, any_backend>());
}
param_set buddy_defaults() { return registry_detail::preset_defaults(presets::classic::make_buddy_config<any_backend>()); }
param_set segregated_pow2_defaults()
{
  return registry_detail::preset_defaults(presets::classic::make_segregated_pow2_config<any_backend>());
}
param_set tlsf_defaults() { return registry_detail::preset_defaults(presets::tlsf::make_config<any_backend>()); }
param_set rmm_defaults() { return registry_detail::preset_defaults(presets::rmm::make_config<any_backend>()); }

namespace classic = presets::classic;
constexpr auto names = std::to_array<named_composition>({
    {"first_fit", "ao_tree", "first", &classic_defaults<classic::first_fit_policy>,
     "classic address-ordered first fit (J&W 1998), O(log n)"},
    {"first_fit_lifo", "list_lifo", "first", &classic_defaults<classic::first_fit_lifo_policy>,
     "classic first fit over a LIFO free list"},
    {"first_fit_fifo", "list_fifo", "first", &classic_defaults<classic::first_fit_fifo_policy>,
     "classic first fit over a FIFO free list"},
    {"next_fit", "ao_tree", "next", &classic_defaults<classic::next_fit_policy>, "classic address-ordered next fit, O(log n)"},
    {"best_fit", "fine_bins", "best", &classic_defaults<classic::best_fit_policy>,
     "classic best fit (lowest address on ties), O(log n)"},
    {"worst_fit", "tree", "worst", &classic_defaults<classic::worst_fit_policy>, "classic worst fit"},
    {"buddy", "tree", "best", &buddy_defaults, "binary buddy system: power-of-two blocks, buddy-only merging"},
    {"segregated_pow2", "list_lifo", "first", &segregated_pow2_defaults,
     "simple segregated storage: power-of-two classes, pages per class, no splitting or coalescing"},
    {"tlsf", "seglist", "good", &tlsf_defaults, "TLSF (Masmano et al. 2004): two-level segregated good fit, O(1)"},
    {"rmm_pool", "tree", "best", &rmm_defaults, "RMM pool_memory_resource: 256 B, best fit, grows by the pool size"},
    {"bins_best", "bins", "best", nullptr, "TF BFC's shape: 21 power-of-two bins, best fit by (size, address)"},
    {"bins_worst", "bins", "worst", nullptr, "size-class bins, largest chunk"},
    {"tree_best", "tree", "best", nullptr, "one red-black tree by (size, address), best fit"},
    {"tree_worst", "tree", "worst", nullptr, "one red-black tree by (size, address), worst fit"},
    {"ao_first", "ao_tree", "first", nullptr, "address-ordered first fit in O(log n) (augmented tree)"},
    {"ao_next", "ao_tree", "next", nullptr, "address-ordered next fit in O(log n) (augmented tree)"},
    {"ao_worst", "ao_tree", "worst", nullptr, "augmented address-ordered tree, worst fit"},
    {"seg_good", "seglist", "good", nullptr, "TLSF-shaped segregated lists, good fit in O(1)"},
    {"seg_best", "seglist", "best", nullptr, "segregated lists, exact best fit"},
    {"list_ao_first", "list_ao", "first", nullptr, "classic address-ordered list, first fit (O(n) scan)"},
    {"list_ao_next", "list_ao", "next", nullptr, "classic address-ordered list, next fit (O(n) scan)"},
    {"list_ao_best", "list_ao", "best", nullptr, "classic address-ordered list, best fit (O(n) scan)"},
    {"list_ao_worst", "list_ao", "worst", nullptr, "classic address-ordered list, worst fit (O(n) scan)"},
    {"list_lifo_first", "list_lifo", "first", nullptr, "classic LIFO list, first fit"},
    {"list_fifo_first", "list_fifo", "first", nullptr, "classic FIFO list, first fit"},
    {"list_lifo_next", "list_lifo", "next", nullptr, "classic LIFO list, next fit"},
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

void apply_assignments(param_set& p, std::string_view list)
{
  for (std::string_view const kv : list_items(list))
    if (!kv.empty()) p.set_assignment(kv);
}

named_composition const* find_named(std::string_view name)
{
  for (auto const& n : names)
    if (n.name == name) return &n;
  return nullptr;
}

// The keys of an index's own parameters; the other indexes read none.
std::vector<std::string_view> index_keys(std::string_view index)
{
  if (index == "bins" || index == "fine_bins") return {"bin_base", "bin_count"};
  if (index == "seglist") return {"sli", "linear_limit"};
  return {};
}

// A policy spec resolved to what builds it and the parameters it reads.
struct resolved_policy {
  policy_spec spec;
  registry_detail::preset const* preset = nullptr;  // else a composition of index and fit
  std::string index, fit;
  param_set defaults;  // the policy's own, where they are not the table's
  std::vector<std::string_view> keys;
};

[[noreturn]] void unknown_policy(std::string const& name)
{
  std::vector<std::string_view> known;
  for (auto const& p : registry_detail::preset_instantiations()) known.push_back(p.name);
  for (auto const& n : names) known.push_back(n.name);
  std::string list;
  for (auto const k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  std::string const guess = closest_name(name, known);
  throw std::invalid_argument("unknown policy '" + name + "'" + (guess.empty() ? "" : ": did you mean " + guess + "?") +
                              " (known: " + list + "; or compose:index=I,fit=F,...)");
}

resolved_policy resolve(std::string_view text)
{
  resolved_policy r;
  r.spec = parse_policy_spec(text);
  auto const& base = r.spec.base;
  if (base == compose_name) {
    r.index = r.spec.index;
    r.fit = r.spec.fit;
  } else if (auto const* preset = find_preset(base)) {
    r.preset = preset;
    apply_assignments(r.defaults, preset->defaults);
    for (auto const& p : known_params())
      if (p.part == preset->part || p.part == "backend") r.keys.push_back(p.key);
    r.keys.insert(r.keys.end(), preset->shared_keys.begin(), preset->shared_keys.end());
    return r;
  } else if (auto const* named = find_named(base)) {
    r.index = named->index;
    r.fit = named->fit;
    if (named->defaults != nullptr) r.defaults = named->defaults();
  } else {
    unknown_policy(base);
  }
  auto const own_index = index_keys(r.index);
  for (auto const& p : known_params()) {
    bool const generic = std::find(registry_detail::generic_parts.begin(), registry_detail::generic_parts.end(), p.part) !=
                         registry_detail::generic_parts.end();
    if (generic && (p.part != "index" || std::find(own_index.begin(), own_index.end(), p.key) != own_index.end()))
      r.keys.push_back(p.key);
  }
  return r;
}

bool reads(resolved_policy const& r, std::string_view key)
{
  return std::find(r.keys.begin(), r.keys.end(), key) != r.keys.end();
}

// Refuses a key the policy would not read: never silently ignored.
void check_read(resolved_policy const& r, param_set const& p)
{
  for (auto const& [key, value] : p.values()) {
    if (reads(r, key)) continue;
    std::string const name = r.spec.label;
    // max_split_size (bytes, a composition's) and max_split_size_mb (MiB, PyTorch's option).
    for (std::string const& twin : {key + "_mb", key.ends_with("_mb") ? key.substr(0, key.size() - 3) : std::string()})
      if (!twin.empty() && reads(r, twin))
        throw std::invalid_argument("parameter " + key + " does not apply to " + name + ", which reads " + twin +
                                    (twin.ends_with("_mb") ? " (in MiB, as PyTorch's option)" : " (in bytes)") + " instead");
    if (part_of(key) == "index")
      throw std::invalid_argument("parameter " + key + " does not apply to " + name + ", whose index (" +
                                  (r.index.empty() ? std::string("its own") : r.index) + ") does not read it");
    registry_detail::refuse_unread_key(name, key);
  }
}

}  // namespace

std::optional<composition_parts> parts_of(std::string_view spec)
{
  resolved_policy const r = resolve(spec);
  if (r.preset != nullptr) return std::nullopt;
  return composition_parts{std::string(r.index), std::string(r.fit)};
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

std::vector<std::string_view> parameters_read(std::string_view spec) { return resolve(spec).keys; }

param_set scoped_parameters(std::string_view spec, param_set const& user)
{
  resolved_policy const r = resolve(spec);
  param_set out;
  for (auto const& [key, value] : user.values())
    if (reads(r, key)) out.set(key, value);
  return out;
}

policy_summary describe_policy(std::string_view spec)
{
  resolved_policy const r = resolve(spec);
  policy_summary s;
  s.name = r.spec.label;
  if (r.preset != nullptr) {
    s.description = r.preset->description;
    s.parts = "its own, in " + std::string(r.preset->header);
  } else {
    auto const* named = find_named(r.spec.base);
    s.description = named != nullptr ? std::string(named->description) : "a composition";
    s.parts = "index " + std::string(r.index) + ", fit " + std::string(r.fit);
  }
  s.keys = r.keys;
  return s;
}

std::unique_ptr<composition> make_composition(std::string_view spec, param_set const& user, backend_choice const& chosen)
{
  resolved_policy const r = resolve(spec);
  for (auto const& [key, value] : user.values())
    if (r.spec.params.has(key))
      throw std::invalid_argument("parameter " + key + " is set both in policy '" + std::string(spec) + "' (" +
                                  r.spec.params.text(key) + ") and by --set (" + value + "): give it in one place");
  param_set const own = r.spec.params.merged_with(user);
  check_read(r, own);
  param_set const merged = r.defaults.merged_with(own);
  backend_choice const backend = registry_detail::with_device_capacity(chosen, user);
  std::unique_ptr<composition> made;
  if (r.preset != nullptr) {
    made = r.preset->make(r.spec.label, merged, backend);
  } else {
    registry_detail::composition_factory make = nullptr;
    for_each_instantiation([&](registry_detail::instantiation const& i) {
      if (i.index == r.index && i.fit == r.fit) make = i.make;
    });
    if (make == nullptr) {
      std::string pairs;
      for (auto const& p : composable_pairs())
        pairs += (pairs.empty() ? "" : ", ") + std::string(p.index) + "/" + std::string(p.fit);
      throw std::invalid_argument("no composition of index '" + std::string(r.index) + "' with fit '" + std::string(r.fit) +
                                  "' (composable: " + pairs + ")");
    }
    made = make(r.spec.label, merged, backend);
  }
  // Every key the policy read, as it ran; the granularity has its own column.
  std::string text;
  for (std::string_view const key : r.keys)
    if (key != "granularity" && backend_reads(made->backend().kind, key))
    {
      if (!text.empty()) text += ' ';
      text.append(key).append("=").append(made->params().text(key));
    }
  made->parameters_ = std::move(text);
  return made;
}

}  // namespace fraglab
