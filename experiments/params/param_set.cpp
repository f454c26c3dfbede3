#include "experiments/params/param_set.hpp"

#include "experiments/params/closest_name.hpp"
#include "experiments/params/units.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <stdexcept>

namespace fraglab {
namespace {

constexpr std::array<param_spec, 29> table{{
    {"quantum", "size", "16", "requests round up to a multiple of this power of two; also the address granule"},
    {"min_size", "size", "16", "smallest chunk handed out"},
    {"header", "size", "0", "bytes added to every request before rounding (boundary-tag overhead)"},
    {"size_classes", "size", "none", "none, or pow2: round up to the next power of two"},
    {"split", "split", "threshold", "threshold (see the keys below) or never"},
    {"min_remainder", "split", "0", "split only when the remainder is at least this (0: any remainder)"},
    {"split_ratio", "split", "1", "split only when chunk >= split_ratio x request (or the next key holds)"},
    {"max_internal_fragmentation", "split", "unlimited", "split anyway when the remainder is at least this (TF)"},
    {"max_split_size", "split", "unlimited", "requests at least this large are never split (PyTorch)"},
    {"coalesce", "coalesce", "immediate", "immediate, deferred (until a miss), never, or buddy (binary buddy: halving splits, buddy-only merges)"},
    {"growth", "growth", "exact", "exact, doubling, fixed, segments or proportional (max(need, factor x held))"},
    {"initial_region", "growth", "2MiB", "fixed: the pool's size; doubling: the first region's size"},
    {"growth_factor", "growth", "2", "doubling: how much each region grows"},
    {"backoff", "growth", "0", "on a refused acquisition retry with backoff x size (0: no retry; TF 0.9)"},
    {"backoff_once", "growth", "false", "back off on the first refusal only, ever (TF)"},
    {"backoff_to_need", "growth", "false", "when backing off below the request, try the request itself once (RMM)"},
    {"memory_limit", "growth", "unlimited", "the most bytes ever held from the backend"},
    {"release_free_regions", "growth", "false", "after a failed growth, release wholly free regions and retry"},
    {"small_request", "growth", "1MiB", "segments: requests up to this get a small segment"},
    {"small_segment", "growth", "2MiB", "segments: size of a small segment"},
    {"medium_request", "growth", "10MiB", "segments: requests below this get a medium segment"},
    {"medium_segment", "growth", "20MiB", "segments: size of a medium segment"},
    {"large_round", "growth", "2MiB", "segments: larger requests round up to a multiple of this"},
    {"bin_base", "index", "256", "bins: lower bound of bin 0 (power of two; fine_bins: the smallest chunk unless set)"},
    {"bin_count", "index", "21", "bins: number of bins (1..64; fine_bins: 1..160, 160 unless set)"},
    {"sli", "index", "5", "seglist: second-level index bits (2^sli lists per power of two)"},
    {"linear_limit", "index", "256", "seglist: exact size classes below this"},
    {"per_stream", "pools", "false", "one free index per stream: blocks are reused by their own stream only"},
    {"size_class_pools", "pools", "false", "one free index and its own regions per rounded size (simple segregated storage)"},
}};

constexpr std::array<param_spec, 5> pytorch_table{{
    {"max_split_size_mb", "pytorch_caching", "unlimited", "blocks at least this large (MiB) are never split; smaller requests never take them"},
    {"max_non_split_rounding_mb", "pytorch_caching", "20", "a request >= max_split_size takes an unsplit block at most this much larger (MiB)"},
    {"roundup_power2_divisions", "pytorch_caching", "0", "N equal steps between powers of two when rounding sizes above 512 x N (0 or 1: off); per interval as PyTorch takes it, [1:4,256:2,>:1] (SIZE in MiB)"},
    {"per_process_memory_fraction", "pytorch_caching", "0", "memory limit as a fraction of the device (--capacity, or the device itself with a CUDA backend); 0: unset"},
    {"garbage_collection_threshold", "pytorch_caching", "0", "free old cached segments when reserved exceeds this fraction of the memory fraction (0: off)"},
}};

constexpr std::array<param_spec, 3> tf_table{{
    {"allow_growth", "tf_bfc", "auto", "false: one region of the whole memory limit (TF's GPU default); true: doubling regions from 2 MiB; auto: false where a memory limit is known, else true"},
    {"per_process_gpu_memory_fraction", "tf_bfc", "0", "memory limit as a fraction of the device (--capacity, or the device itself with a CUDA backend); 0: unset"},
    {"garbage_collection", "tf_bfc", "true", "after a failed growth, release free regions when that makes room (TF_ENABLE_GPU_GARBAGE_COLLECTION, on by default)"},
}};

constexpr std::array<param_spec, 2> dlmalloc_table{{
    {"mmap_threshold", "dlmalloc", "256KiB", "requests at least this large that nothing free serves get a mapping of their own"},
    {"trim_threshold", "dlmalloc", "2MiB", "a free leaving more top than this gives whole pages back to the system"},
}};

constexpr std::array<param_spec, 4> gmlake_table{{
    {"vmm_defragment", "gmlake", "true", "stitch free blocks into new virtual ranges (GMLake's vmmDefragment); false: PyTorch's allocator with 2 MiB pages"},
    {"frag_limit", "gmlake", "512MiB", "requests at least this large may be served by stitching free blocks (fragLimit)"},
    {"reuse_limit", "gmlake", "10", "a stitched block serves a request at most this many times smaller (reuseLimit)"},
    {"auto_gc_limit", "gmlake", "1000GiB", "after a stitch beyond this many stitched virtual bytes, drop every idle stitched block (autoGC)"},
}};

constexpr std::array<param_spec, 4> backend_table{{
    {"granularity", "backend", "backend's own", "acquisitions round up to this (simulated 256, heap 4096, host 4096, cuda 256, cuda_pinned 4096; cuda_vmm takes the device's own)"},
    {"merging", "backend", "false", "simulated: consecutive acquisitions are adjacent and may merge"},
    {"device", "backend", "0", "cuda, cuda_async, cuda_vmm: the device's ordinal"},
    {"device_memory_fraction", "backend", "0", "cuda, cuda_async, cuda_vmm: at most this fraction of the device's memory (0: unset; --capacity gives bytes)"},
}};

constexpr std::size_t param_count =
    table.size() + pytorch_table.size() + tf_table.size() + dlmalloc_table.size() + gmlake_table.size() + backend_table.size();

std::array<param_spec, param_count> const all = [] {
  std::array<param_spec, param_count> a{};
  std::size_t i = 0;
  for (auto const& p : table) a[i++] = p;
  for (auto const& p : pytorch_table) a[i++] = p;
  for (auto const& p : tf_table) a[i++] = p;
  for (auto const& p : dlmalloc_table) a[i++] = p;
  for (auto const& p : gmlake_table) a[i++] = p;
  for (auto const& p : backend_table) a[i++] = p;
  return a;
}();

param_spec const& spec_of(std::string_view key)
{
  for (auto const& p : all)
    if (p.key == key) return p;
  std::string known;
  std::vector<std::string_view> keys;
  for (auto const& p : all) {
    known += (known.empty() ? "" : ", ") + std::string(p.key);
    keys.push_back(p.key);
  }
  std::string const guess = closest_name(key, keys);
  throw std::invalid_argument("unknown parameter '" + std::string(key) + "'" + (guess.empty() ? "" : ": did you mean " + guess + "?") +
                              " (known: " + known + "; `fraglab policies NAME` lists those a policy reads)");
}

[[noreturn]] void bad_value(std::string_view key, std::string const& value, std::string_view expected)
{
  throw std::invalid_argument("parameter " + std::string(key) + ": expected " + std::string(expected) + ", got '" +
                              value + "'");
}

std::optional<bool> flag_value(std::string_view v)
{
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<double> real_value(std::string_view v)
{
  double d = 0;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc{} || end != v.data() + v.size()) return std::nullopt;
  return d;
}

}  // namespace

bool same_param_value(std::string_view a, std::string_view b)
{
  if (a == b) return true;
  if (auto const x = real_value(a), y = real_value(b); x && y) return *x == *y;
  if (auto const x = parse_size(a), y = parse_size(b); x && y) return *x == *y;
  if (auto const x = flag_value(a), y = flag_value(b); x && y) return *x == *y;
  return false;
}

std::span<param_spec const> known_params() { return all; }

std::string_view part_of(std::string_view key) { return spec_of(key).part; }

void param_set::set(std::string_view key, std::string_view value)
{
  (void)spec_of(key);
  values_[std::string(key)] = std::string(value);
}

void param_set::set_assignment(std::string_view kv)
{
  std::size_t const eq = kv.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw std::invalid_argument("expected KEY=VALUE, got '" + std::string(kv) + "'");
  std::string_view const key = kv.substr(0, eq);
  if (has(key)) throw std::invalid_argument(std::string(key) + " is given twice (" + text(key) + ", then " + std::string(kv) + ")");
  set(key, kv.substr(eq + 1));
}

param_set param_set::merged_with(param_set const& over) const
{
  param_set out = *this;
  for (auto const& [k, v] : over.values_) out.values_[k] = v;
  return out;
}

std::string param_set::text(std::string_view key) const
{
  auto it = values_.find(std::string(key));
  return it != values_.end() ? it->second : std::string(spec_of(key).default_value);
}

std::size_t param_set::size(std::string_view key) const
{
  std::string const v = text(key);
  if (v == "unlimited") return std::numeric_limits<std::size_t>::max();
  auto const n = parse_size(v);
  if (!n) bad_value(key, v, "a size such as 4096, 512MiB or 1.5GB, or 'unlimited'");
  return *n;
}

double param_set::real(std::string_view key) const
{
  std::string const v = text(key);
  auto const d = real_value(v);
  if (!d) bad_value(key, v, "a number");
  return *d;
}

bool param_set::flag(std::string_view key) const
{
  std::string const v = text(key);
  auto const f = flag_value(v);
  if (!f) bad_value(key, v, "true or false");
  return *f;
}

unsigned param_set::count(std::string_view key) const
{
  std::string const v = text(key);
  unsigned n = 0;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size()) bad_value(key, v, "a non-negative integer");
  return n;
}

}  // namespace fraglab
