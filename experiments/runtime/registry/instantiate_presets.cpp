// Presets that reproduce real allocators, with their own option names as parameters.
#include <fraglab/policies/presets/dlmalloc.hpp>
#include <fraglab/policies/presets/gmlake.hpp>
#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/policies/presets/tf_bfc.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/params/rule_parameters.hpp>
#include <fraglab/runtime/registry/composition_impl.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <optional>
#include <limits>

namespace fraglab::registry_detail {
namespace {

std::size_t mebibytes(param_set const& p, std::string_view key)
{
  std::size_t const mb = p.size(key);
  if (mb == std::numeric_limits<std::size_t>::max()) return mb;
  if (mb > (std::numeric_limits<std::size_t>::max() >> 20)) throw std::invalid_argument(std::string(key) + " is too large");
  return mb << 20;
}

// memory_limit when given; else `fraction_key` x the device (--capacity) when set; else
// `otherwise`.
std::size_t memory_limit(param_set const& p, backend_choice const& b, std::string_view fraction_key,
                         std::size_t otherwise)
{
  if (p.has("memory_limit")) return p.size("memory_limit");
  double const fraction = p.real(fraction_key);
  if (fraction < 0.0 || fraction > 1.0) throw std::invalid_argument(std::string(fraction_key) + " must be in [0, 1]");
  if (fraction == 0.0) return otherwise;
  if (b.capacity == std::numeric_limits<std::size_t>::max())
    throw std::invalid_argument(std::string(fraction_key) + " needs the device size: give --capacity");
  return static_cast<std::size_t>(static_cast<long double>(b.capacity) * fraction);
}

// roundup_power2_divisions as PyTorch's PYTORCH_CUDA_ALLOC_CONF takes it: one number for every
// interval, or per interval `[1:4,256:2,>:1]`: SIZE (MiB, a power of two) sets the interval
// starting there, the first entry also every one below it, `>` every one after the last.
std::array<std::size_t, presets::pytorch::power2_intervals> roundup_divisions(std::string const& text)
{
  namespace pt = presets::pytorch;
  std::array<std::size_t, pt::power2_intervals> out{};
  auto const bad = [&](std::string const& why) {
    throw std::invalid_argument("parameter roundup_power2_divisions: " + why + ", got '" + text + "'");
  };
  auto const number = [&](std::string_view s) {
    std::size_t v = 0;
    auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) bad("expected N or [SIZE:N,...,>:N]");
    return v;
  };
  if (text.empty() || text.front() != '[') {
    out.fill(number(text));
    return out;
  }
  if (text.back() != ']' || text.size() < 3) bad("expected [SIZE:N,...,>:N]");
  std::optional<std::size_t> last;
  for (std::string_view const entry : list_items(std::string_view(text).substr(1, text.size() - 2))) {
    std::size_t const colon = entry.find(':');
    if (colon == std::string_view::npos) bad("expected SIZE:N in each entry");
    std::size_t const divisions = number(entry.substr(colon + 1));
    if (entry.substr(0, colon) == ">") {
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(last ? *last + 1 : 0), out.end(), divisions);
      continue;
    }
    std::size_t const mib = number(entry.substr(0, colon));
    if (!std::has_single_bit(mib)) bad("expected interval starts that are powers of two (MiB)");
    std::size_t const index = std::min<std::size_t>(static_cast<std::size_t>(std::bit_width(mib) - 1), pt::power2_intervals - 1);
    if (!last) std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(index), divisions);
    out[index] = divisions;
    last = index;
  }
  return out;
}

std::unique_ptr<composition> make_pytorch(std::string name, param_set const& p, backend_choice const& b, bool expandable)
{
  namespace pt = presets::pytorch;
  pt::settings s;
  s.max_split_size = mebibytes(p, "max_split_size_mb");
  // PyTorch refuses max_split_size_mb <= 20 (kLargeBuffer): smaller values would strand every
  // small segment.
  if (s.max_split_size <= pt::large_buffer)
    throw std::invalid_argument("max_split_size_mb must be greater than 20, as PyTorch requires");
  s.max_non_split_rounding = mebibytes(p, "max_non_split_rounding_mb");
  s.roundup_power2_divisions = roundup_divisions(p.text("roundup_power2_divisions"));
  // Without a fraction PyTorch sets no limit of its own: only the device's size bounds it.
  s.memory_limit = memory_limit(p, b, "per_process_memory_fraction", std::numeric_limits<std::size_t>::max());
  s.garbage_collection_threshold = p.real("garbage_collection_threshold");
  if (s.garbage_collection_threshold < 0.0 || s.garbage_collection_threshold >= 1.0)
    throw std::invalid_argument("garbage_collection_threshold must be in [0, 1)");
  if (s.garbage_collection_threshold > 0.0 && s.memory_limit == std::numeric_limits<std::size_t>::max())
    throw std::invalid_argument("garbage_collection_threshold needs a memory fraction: give per_process_memory_fraction "
                                "and --capacity, or memory_limit");
  s.expandable_segments = expandable;
  if (expandable) {
    if (s.garbage_collection_threshold > 0.0)
      throw std::invalid_argument("garbage_collection_threshold is not modelled with expandable segments");
    if (b.capacity != std::numeric_limits<std::size_t>::max()) s.device_memory = b.capacity;
    if (!b.kind.empty() && b.kind != "simulated" && b.kind != "host" && b.kind != "cuda_vmm")
      throw std::invalid_argument(
          "pytorch_expandable needs address reservations: only the simulated, host and cuda_vmm backends have them");
  }
  backend_choice chosen = b;
  if (chosen.kind.empty()) chosen.kind = "simulated";
  auto config = pt::make_config<any_backend>(s);
  config.size.validate();
  param_set with_granularity = p;
  // cudaMalloc's alignment; cuda_vmm maps pages of the device's own granularity instead.
  if (!p.has("granularity") && chosen.kind != "cuda_vmm") with_granularity.set("granularity", "2MiB");
  return std::make_unique<composition_of<pt::policy>>(std::move(name), std::move(config), with_granularity, chosen);
}

std::unique_ptr<composition> make_tf_bfc(std::string name, param_set const& p, backend_choice const& b)
{
  namespace tf = presets::tf;
  tf::settings s;
  s.split_ratio = p.real("split_ratio");  if (!(s.split_ratio >= 1.0)) throw std::invalid_argument("parameter split_ratio: must be at least 1");
  s.garbage_collection = p.flag("garbage_collection");
  s.max_internal_fragmentation = p.size("max_internal_fragmentation");
  s.memory_limit = memory_limit(p, b, "per_process_gpu_memory_fraction", b.capacity);  // TF: the device by default
  // TF's GPU allocator (GPUBFCAllocator) takes allow_growth from GPUOptions, false unless
  // asked; a simulation without a memory limit has no whole limit to take, and grows.
  bool const limited = s.memory_limit != std::numeric_limits<std::size_t>::max();
  s.allow_growth = p.text("allow_growth") == "auto" ? !limited : p.flag("allow_growth");
  if (!s.allow_growth && !limited)
    throw std::invalid_argument("allow_growth=false acquires the whole memory limit: give --capacity or memory_limit");
  backend_choice chosen = b;
  if (chosen.kind.empty()) chosen.kind = "simulated";
  param_set as_run = p;  // what `auto` came to, for the results' record
  as_run.set("allow_growth", s.allow_growth ? "true" : "false");
  return std::make_unique<composition_of<tf::policy>>(std::move(name), tf::make_config<any_backend>(s), as_run, chosen);
}

std::unique_ptr<composition> make_dlmalloc(std::string name, param_set const& p, backend_choice const& b)
{
  namespace dl = presets::dlmalloc;
  dl::settings s = rule_from_params<dl::settings>(p);
  s.header = p.size("header");
  s.memory_limit = p.size("memory_limit");
  if (p.has("granularity") && p.size("granularity") != dl::page)
    throw std::invalid_argument("dlmalloc models a 4 KiB page: granularity cannot be changed");
  backend_choice chosen = b;
  if (chosen.kind.empty()) chosen.kind = "heap";
  return std::make_unique<composition_of<dl::policy>>(std::move(name), dl::make_config<any_backend>(s), p, chosen);
}

std::unique_ptr<composition> make_pytorch_caching(std::string name, param_set const& p, backend_choice const& b)
{
  return make_pytorch(std::move(name), p, b, false);
}

std::unique_ptr<composition> make_pytorch_expandable(std::string name, param_set const& p, backend_choice const& b)
{
  return make_pytorch(std::move(name), p, b, true);
}

std::unique_ptr<composition> make_gmlake(std::string name, param_set const& p, backend_choice const& b)
{
  namespace gm = presets::gmlake;
  gm::settings s;
  s.max_split_size = mebibytes(p, "max_split_size_mb");
  if (s.max_split_size <= presets::pytorch::large_buffer)
    throw std::invalid_argument("max_split_size_mb must be greater than 20, as PyTorch requires");
  s.max_non_split_rounding = mebibytes(p, "max_non_split_rounding_mb");
  s.memory_limit = memory_limit(p, b, "per_process_memory_fraction", std::numeric_limits<std::size_t>::max());
  s = rule_from_params<gm::settings>(p, s);
  if (!(s.reuse_limit >= 1.0)) throw std::invalid_argument("parameter reuse_limit: must be at least 1");
  if (s.frag_limit <= presets::pytorch::small_size)
    throw std::invalid_argument("parameter frag_limit: must be above 1MiB (small blocks are never stitched)");
  backend_choice chosen = b;
  if (chosen.kind.empty()) chosen.kind = "simulated";
  if (chosen.kind != "simulated" && chosen.kind != "cuda_vmm")
    throw std::invalid_argument("gmlake stitches by mapping physical pages at a second address, which only the simulated "
                                "and cuda_vmm backends can: use --backend simulated (or cuda_vmm on a device)");
  param_set with_granularity = p;
  if (!p.has("granularity") && chosen.kind != "cuda_vmm") with_granularity.set("granularity", "2MiB");
  return std::make_unique<composition_for<gm::allocator<any_backend>>>(std::move(name), s, with_granularity, chosen);
}

// The generic keys each preset reads besides its own part's and the backend's.
constexpr std::array<std::string_view, 1> pytorch_shared{"memory_limit"};
constexpr std::array<std::string_view, 3> tf_shared{"memory_limit", "max_internal_fragmentation", "split_ratio"};
constexpr std::array<std::string_view, 2> dlmalloc_shared{"memory_limit", "header"};
constexpr std::array<std::string_view, 4> gmlake_shared{"memory_limit", "max_split_size_mb", "max_non_split_rounding_mb",
                                                        "per_process_memory_fraction"};

}  // namespace

std::span<preset const> preset_instantiations()
{
  static constexpr auto table = std::to_array<preset>({
      {"tf_bfc", "TensorFlow's BFC allocator (TF 2.12+): 256 B rounding, 21 bins, best fit, split at 2x, "
                 "doubling regions from 2 MiB",
       "policies/presets/tf_bfc.hpp", "tf_bfc", tf_shared,
       // TF splits a chunk at twice the request, or where it would waste 128 MiB or more
       // (kMaxInternalFragmentation; reference-allocators.md, TensorFlow BFC).
       "split_ratio=2,max_internal_fragmentation=128MiB", &make_tf_bfc},
      {"pytorch_caching", "PyTorch's CUDA caching allocator (2.x): 512 B rounding, small/large pools per stream, "
                          "2/20 MiB segments, best fit, its split rules",
       "policies/presets/pytorch_caching.hpp", "pytorch_caching", pytorch_shared, "", &make_pytorch_caching},
      {"pytorch_expandable", "PyTorch's caching allocator with expandable_segments:True: per-stream reserved ranges, "
                             "2/20 MiB pages mapped at the end, no segment padding",
       "policies/presets/pytorch_caching.hpp", "pytorch_caching", pytorch_shared, "", &make_pytorch_expandable},
      {"gmlake", "GMLake (ASPLOS 2024): PyTorch's caching allocator with 2 MiB pages, stitching free blocks into new "
                 "virtual ranges for requests >= 512 MiB, stitched blocks reused up to 10x the request",
       "policies/presets/gmlake.hpp", "gmlake", gmlake_shared, "", &make_gmlake},
      {"dlmalloc", "Doug Lea's malloc 2.8.6: exact small bins, tree bins, designated victim, top chunk, "
                   "mmap above 256 KiB, 8 B boundary tags",
       "policies/presets/dlmalloc.hpp", "dlmalloc", dlmalloc_shared, "header=8", &make_dlmalloc},
  });
  return table;
}

}  // namespace fraglab::registry_detail
