#include "experiments/params/param_set.hpp"

#include "experiments/params/closest_name.hpp"
#include "experiments/params/rule_parameters.hpp"
#include "experiments/params/units.hpp"
#include "policies/coalesce_rules.hpp"
#include "policies/growth_rules.hpp"
#include "policies/indexes/bins_index.hpp"
#include "policies/indexes/segregated_index.hpp"
#include "policies/pool_rules.hpp"
#include "policies/presets/dlmalloc.hpp"
#include "policies/presets/gmlake.hpp"
#include "policies/size_rules.hpp"
#include "policies/split_rules.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace fraglab {
namespace {

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

constexpr std::array<param_spec, 4> backend_table{{
    {"granularity", "backend", "backend's own", "acquisitions round up to this (simulated 256, heap 4096, host 4096, cuda 256, cuda_pinned 4096; cuda_vmm takes the device's own)"},
    {"merging", "backend", "false", "simulated: consecutive acquisitions are adjacent and may merge"},
    {"device", "backend", "0", "cuda, cuda_async, cuda_vmm: the device's ordinal"},
    {"device_memory_fraction", "backend", "0", "cuda, cuda_async, cuda_vmm: at most this fraction of the device's memory (0: unset; --capacity gives bytes)"},
}};

// Every known key: the generic parts' from their rules (each declares its own,
// policies/rule_parameter.hpp), then the presets' and the backends' own. dlmalloc's and
// GMLake's settings declare theirs; PyTorch's and TF's keys are written here, as their
// texts are not a member's value (sizes in MiB, fractions of a device, `auto`, lists of
// intervals) and are read in experiments/registry/instantiate_presets.cpp.
struct parameter_table {
  std::deque<std::string> defaults;  // the declared keys' defaults, rendered from their rules and settings
  std::vector<param_spec> rows;
};

parameter_table const& all()
{
  static parameter_table const table = [] {
    parameter_table t;
    auto const rows_of = [&]<class Rule>(std::type_identity<Rule>) {
      for_each_parameter_row<Rule>([&](std::string_view key, std::string_view part, std::string value, std::string_view help) {
        t.defaults.push_back(std::move(value));
        t.rows.push_back({key, part, t.defaults.back(), help});
      });
    };
    rows_of(std::type_identity<quantum_size_rule>{});
    rows_of(std::type_identity<threshold_split>{});
    rows_of(std::type_identity<coalescing>{});
    rows_of(std::type_identity<growth_rule>{});
    rows_of(std::type_identity<bins_index_params>{});
    rows_of(std::type_identity<segregated_index_params>{});
    rows_of(std::type_identity<stream_pool_rule>{});
    t.rows.insert(t.rows.end(), pytorch_table.begin(), pytorch_table.end());
    t.rows.insert(t.rows.end(), tf_table.begin(), tf_table.end());
    rows_of(std::type_identity<presets::dlmalloc::settings>{});
    rows_of(std::type_identity<presets::gmlake::settings>{});
    t.rows.insert(t.rows.end(), backend_table.begin(), backend_table.end());
    return t;
  }();
  return table;
}

param_spec const& spec_of(std::string_view key)
{
  for (auto const& p : all().rows)
    if (p.key == key) return p;
  std::string known;
  std::vector<std::string_view> keys;
  for (auto const& p : all().rows) {
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

// A finite number: from_chars also reads "nan" and "inf", which pass every range check
// written as a comparison (nan < 0 is false) and then decide nothing or everything.
std::optional<double> real_value(std::string_view v)
{
  double d = 0;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc{} || end != v.data() + v.size() || !std::isfinite(d)) return std::nullopt;
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

std::span<param_spec const> known_params() { return all().rows; }

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
  if (!d) bad_value(key, v, "a finite number");
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
