#include <fraglab/runtime/registry/config_from_params.hpp>

#include <fraglab/backends/heap_backend.hpp>
#include <fraglab/backends/host_backend.hpp>
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/runtime/params/rule_parameters.hpp>
#include <fraglab/runtime/registry/cuda_backends.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <limits>

namespace fraglab::registry_detail {

threshold_split split_from_params(param_set const& p)
{
  threshold_split const s = rule_from_params<threshold_split>(p);
  if (!(s.ratio >= 1.0)) throw std::invalid_argument("parameter split_ratio: must be at least 1");
  return s;
}

// The fine bins take the bins' keys where given; unset, their base and count follow the size
// rule (fit_index_to_size_rule).
fine_bins_index_params fine_bins_from_params(param_set const& p)
{
  fine_bins_index_params b;
  bins_index_params const given = rule_from_params<bins_index_params>(p);
  if (p.has("bin_base")) b.bin_base = given.bin_base;
  if (p.has("bin_count")) b.bin_count = given.bin_count;
  return b;
}

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
