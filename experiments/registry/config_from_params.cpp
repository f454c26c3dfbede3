#include "experiments/registry/config_from_params.hpp"

#include "backends/heap_backend.hpp"
#include "backends/host_backend.hpp"
#include "backends/simulated_backend.hpp"
#include "experiments/params/units.hpp"
#include "experiments/registry/cuda_backends.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <limits>
#include "experiments/registry/composition_impl.hpp"

namespace fraglab::registry_detail {
namespace {

[[noreturn]] void bad_choice(std::string_view key, std::string const& value, std::string_view choices)
{
  throw std::invalid_argument("parameter " + std::string(key) + ": expected one of " + std::string(choices) + ", got '" +
                              value + "'");
}

}  // namespace

threshold_split split_from_params(param_set const& p)
{
  std::string const kind = p.text("split");
  if (kind == "never") return threshold_split::never();
  if (kind != "threshold") bad_choice("split", kind, "threshold, never");
  threshold_split s;
  s.min_remainder = p.size("min_remainder");
  s.ratio = p.real("split_ratio");
  if (!(s.ratio >= 1.0)) throw std::invalid_argument("parameter split_ratio: must be at least 1");
  s.max_internal_fragmentation = p.size("max_internal_fragmentation");
  s.max_split_size = p.size("max_split_size");
  return s;
}

coalescing coalescing_from_params(param_set const& p)
{
  std::string const m = p.text("coalesce");
  if (m == "immediate") return {coalesce_mode::immediate};
  if (m == "deferred") return {coalesce_mode::deferred};
  if (m == "never") return {coalesce_mode::never};
  if (m == "buddy") return {coalesce_mode::buddy};
  bad_choice("coalesce", m, "immediate, deferred, never, buddy");
}

growth_rule growth_from_params(param_set const& p)
{
  growth_rule g;
  std::string const k = p.text("growth");
  if (k == "exact") g.kind = growth_kind::exact;
  else if (k == "doubling") g.kind = growth_kind::doubling;
  else if (k == "fixed") g.kind = growth_kind::fixed;
  else if (k == "segments") g.kind = growth_kind::segments;
  else if (k == "proportional") g.kind = growth_kind::proportional;
  else bad_choice("growth", k, "exact, doubling, fixed, segments, proportional");
  g.initial = p.size("initial_region");
  g.factor = p.real("growth_factor");
  g.backoff = p.real("backoff");
  g.memory_limit = p.size("memory_limit");
  g.release_free_regions = p.flag("release_free_regions");
  g.backoff_once = p.flag("backoff_once");
  g.backoff_to_need = p.flag("backoff_to_need");
  g.small_request = p.size("small_request");
  g.small_segment = p.size("small_segment");
  g.medium_request = p.size("medium_request");
  g.medium_segment = p.size("medium_segment");
  g.large_round = p.size("large_round");
  return g;
}

quantum_size_rule size_from_params(param_set const& p)
{
  quantum_size_rule s;
  s.quantum = p.size("quantum");
  s.min_size = p.size("min_size");
  s.header = p.size("header");
  std::string const classes = p.text("size_classes");
  if (classes == "pow2") s.power_of_two_classes = true;
  else if (classes != "none") bad_choice("size_classes", classes, "none, pow2");
  return s;
}

namespace {

// A size as config_from_params reads it back: unlimited (param_set::size's word for the
// largest), or exactly in the unit that fits (256MiB).
std::string size_text(std::size_t bytes)
{
  return bytes == std::numeric_limits<std::size_t>::max() ? "unlimited" : exact_size_text(bytes);
}

// The shortest text that reads back as the same double (0.5, 1, 2).
std::string real_text(double x)
{
  std::array<char, 32> buf{};
  auto const [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return ec == std::errc{} ? std::string(buf.data(), end) : std::to_string(x);
}

std::string flag_text(bool b) { return b ? "true" : "false"; }

}  // namespace

param_set params_of(threshold_split const& s, coalesce_mode coalesce, growth_rule const& g, quantum_size_rule const& z,
                    stream_pool_rule const& pools)
{
  param_set p;
  p.set("split", s.enabled ? "threshold" : "never");
  p.set("min_remainder", size_text(s.min_remainder));
  p.set("split_ratio", real_text(s.ratio));
  p.set("max_internal_fragmentation", size_text(s.max_internal_fragmentation));
  p.set("max_split_size", size_text(s.max_split_size));
  p.set("coalesce", to_string(coalesce));
  p.set("growth", to_string(g.kind));
  p.set("initial_region", size_text(g.initial));
  p.set("growth_factor", real_text(g.factor));
  p.set("backoff", real_text(g.backoff));
  p.set("backoff_once", flag_text(g.backoff_once));
  p.set("backoff_to_need", flag_text(g.backoff_to_need));
  p.set("memory_limit", size_text(g.memory_limit));
  p.set("release_free_regions", flag_text(g.release_free_regions));
  p.set("small_request", size_text(g.small_request));
  p.set("small_segment", size_text(g.small_segment));
  p.set("medium_request", size_text(g.medium_request));
  p.set("medium_segment", size_text(g.medium_segment));
  p.set("large_round", size_text(g.large_round));
  p.set("quantum", size_text(z.quantum));
  p.set("min_size", size_text(z.min_size));
  p.set("header", size_text(z.header));
  p.set("size_classes", z.power_of_two_classes ? "pow2" : "none");
  p.set("per_stream", flag_text(pools.per_stream));
  p.set("size_class_pools", flag_text(pools.size_class_pools));
  return p;
}

param_set params_of(bins_index_params const& ix)
{
  param_set p;
  p.set("bin_base", size_text(ix.bin_base));
  p.set("bin_count", std::to_string(ix.bin_count));
  return p;
}

param_set params_of(segregated_index_params const& ix)
{
  param_set p;
  p.set("sli", std::to_string(ix.sli));
  p.set("linear_limit", size_text(ix.linear_limit));
  return p;
}

bins_index_params bins_from_params(param_set const& p) { return {p.size("bin_base"), p.count("bin_count")}; }

fine_bins_index_params fine_bins_from_params(param_set const& p)
{
  fine_bins_index_params b;
  if (p.has("bin_base")) b.bin_base = p.size("bin_base");
  if (p.has("bin_count")) b.bin_count = p.count("bin_count");
  return b;
}

segregated_index_params seglist_from_params(param_set const& p) { return {p.count("sli"), p.size("linear_limit")}; }

void check_keys(std::string const& name, param_set const& p, std::span<std::string_view const> parts)
{
  auto const in = [](auto const& list, std::string_view x) { return std::find(list.begin(), list.end(), x) != list.end(); };
  for (auto const& [key, value] : p.values()) {
    if (!in(parts, part_of(key))) refuse_unread_key(name, key);
  }
}

void refuse_unread_key(std::string const& name, std::string const& key)
{
  std::string_view const part = part_of(key);
  if (std::find(generic_parts.begin(), generic_parts.end(), part) != generic_parts.end())
    throw std::invalid_argument("parameter " + key + " does not apply to " + name);
  throw std::invalid_argument("parameter " + key + " belongs to the " + std::string(part) + " preset and does not apply to " + name);
}

any_backend make_backend(backend_choice const& b, param_set const& p)
{
  check_backend_keys(b.kind, p);
  bool const custom_granularity = p.has("granularity");
  if (b.kind == "simulated") {
    simulated_backend_params sp;
    sp.capacity = b.capacity;
    if (custom_granularity) sp.granularity = p.size("granularity");
    sp.merging = p.flag("merging");
    return any_backend(simulated_backend(sp));
  }
  if (b.kind == "heap") {
    heap_backend_params hp;
    hp.capacity = b.capacity;
    if (custom_granularity) hp.granularity = p.size("granularity");
    return any_backend(heap_backend(hp));
  }
  if (b.kind == "host") {
    host_backend_params hp;
    hp.capacity = b.capacity;
    if (custom_granularity) hp.granularity = p.size("granularity");
    return any_backend(host_backend(hp));
  }
  if (is_cuda_backend(b.kind)) return make_cuda_backend(b, p);
  throw std::invalid_argument("unknown backend '" + b.kind + "' (known: simulated, heap, host, cuda, cuda_async, cuda_vmm, cuda_pinned)");
}

}  // namespace fraglab::registry_detail

namespace fraglab {

bool backend_reads(std::string_view kind, std::string_view key)
{
  if (key == "merging") return kind == "simulated";
  if (key == "device" || key == "device_memory_fraction") return registry_detail::is_device_memory_backend(kind);
  if (key == "granularity") return kind != "cuda_vmm";
  return true;
}

void check_backend_keys(std::string_view kind, param_set const& p)
{
  auto const refuse_unless_read = [&](std::string_view key, std::string_view readers, std::string_view hint) {
    if (backend_reads(kind, key) || !p.has(key)) return;
    throw std::invalid_argument("parameter " + std::string(key) + " applies to " + std::string(readers) + ", not to backend '" +
                                std::string(kind) + "'" + std::string(hint));
  };
  refuse_unless_read("merging", "the simulated backend", "");
  refuse_unless_read("device", "the device backends (cuda, cuda_async, cuda_vmm)", "");
  refuse_unless_read("device_memory_fraction", "the device backends (cuda, cuda_async, cuda_vmm)",
                     ": give a limit in bytes with --capacity");
  refuse_unless_read("granularity", "every backend but cuda_vmm", ", which maps pages of the device's own granularity");
}

}  // namespace fraglab
