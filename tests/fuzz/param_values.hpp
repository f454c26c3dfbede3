// The parameters a sweep's --set gives, as the fuzz targets draw them: every known key, and
// for each the shape of its values. Values are drawn mostly from the key's valid range, and
// now and then from just outside it, so that validation is exercised as well as the rules.
//
// The bytes are read in a fixed order, so a corpus input replays the same settings for as
// long as this table, pick_value() and draw_settings() stay: change them only with the seeds
// (tests/fuzz/make_corpus.py).
#pragma once

#include <fraglab/runtime/params/param_set.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace fraglab::fuzz {

// What a key's values look like.
enum class value_kind { bytes, power_of_two, ratio, factor, fraction, flag, count, choice };

struct key_values {
  std::string_view key;
  value_kind kind;
  std::array<std::string_view, 5> choices{};  // value_kind::choice
  unsigned low = 0, high = 0;                  // value_kind::count
};

// The known keys (experiments/runtime/params/parameter_table.cpp). The CUDA backends' own (device,
// device_memory_fraction) are drawn too: no backend here reads them, so each must be refused
// with its reason (check_backend_keys), never ignored.
inline constexpr std::array keys{
    key_values{"quantum", value_kind::power_of_two},
    key_values{"min_size", value_kind::bytes},
    key_values{"header", value_kind::bytes},
    key_values{"size_classes", value_kind::choice, {"none", "pow2"}},
    key_values{"split", value_kind::choice, {"threshold", "never"}},
    key_values{"min_remainder", value_kind::bytes},
    key_values{"split_ratio", value_kind::ratio},
    key_values{"max_internal_fragmentation", value_kind::bytes},
    key_values{"max_split_size", value_kind::bytes},
    key_values{"coalesce", value_kind::choice, {"immediate", "deferred", "never", "buddy"}},
    key_values{"growth", value_kind::choice, {"exact", "doubling", "fixed", "segments", "proportional"}},
    key_values{"initial_region", value_kind::bytes},
    key_values{"growth_factor", value_kind::factor},
    key_values{"backoff", value_kind::fraction},
    key_values{"backoff_once", value_kind::flag},
    key_values{"backoff_to_need", value_kind::flag},
    key_values{"memory_limit", value_kind::bytes},
    key_values{"release_free_regions", value_kind::flag},
    key_values{"small_request", value_kind::bytes},
    key_values{"small_segment", value_kind::bytes},
    key_values{"medium_request", value_kind::bytes},
    key_values{"medium_segment", value_kind::bytes},
    key_values{"large_round", value_kind::power_of_two},
    key_values{"bin_base", value_kind::power_of_two},
    key_values{"bin_count", value_kind::count, {}, 0, 170},
    key_values{"sli", value_kind::count, {}, 0, 8},
    key_values{"linear_limit", value_kind::power_of_two},
    key_values{"per_stream", value_kind::flag},
    key_values{"size_class_pools", value_kind::flag},
    key_values{"max_split_size_mb", value_kind::count, {}, 0, 64},
    key_values{"max_non_split_rounding_mb", value_kind::count, {}, 0, 64},
    key_values{"roundup_power2_divisions", value_kind::count, {}, 0, 32},
    key_values{"per_process_memory_fraction", value_kind::fraction},
    key_values{"garbage_collection_threshold", value_kind::fraction},
    key_values{"allow_growth", value_kind::flag},
    key_values{"per_process_gpu_memory_fraction", value_kind::fraction},
    key_values{"garbage_collection", value_kind::flag},
    key_values{"mmap_threshold", value_kind::bytes},
    key_values{"trim_threshold", value_kind::bytes},
    key_values{"granularity", value_kind::power_of_two},
    key_values{"merging", value_kind::flag},
    key_values{"device", value_kind::count, {}, 0, 8},
    key_values{"device_memory_fraction", value_kind::fraction},
};

inline std::string pick_value(FuzzedDataProvider& in, key_values const& k)
{
  auto real = [&](double low, double high) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", low + (high - low) * in.ConsumeProbability<double>());
    return std::string(text);
  };
  switch (k.kind) {
    case value_kind::bytes:
      switch (in.ConsumeIntegralInRange<int>(0, 4)) {
        case 0: return std::to_string(in.ConsumeIntegralInRange<std::size_t>(0, 4096));
        case 1: return std::to_string(std::size_t{1} << in.ConsumeIntegralInRange<int>(0, 40));
        case 2: return std::to_string(in.ConsumeIntegralInRange<unsigned>(1, 64)) + "MiB";
        case 3: return "unlimited";
        default: return std::to_string(in.ConsumeIntegral<std::size_t>());
      }
    case value_kind::power_of_two:
      if (in.ConsumeIntegralInRange<int>(0, 15) == 0) return std::to_string(in.ConsumeIntegralInRange<unsigned>(0, 5000));
      return std::to_string(std::size_t{1} << in.ConsumeIntegralInRange<int>(0, 30));
    case value_kind::ratio: return real(0.5, 9.0);
    case value_kind::factor: return real(0.0, 5.0);
    case value_kind::fraction: return real(-0.1, 1.1);
    case value_kind::flag: return in.ConsumeBool() ? "true" : "false";
    case value_kind::count: return std::to_string(in.ConsumeIntegralInRange<unsigned>(k.low, k.high));
    case value_kind::choice: {
      std::size_t n = 0;
      while (n < k.choices.size() && !k.choices[n].empty()) ++n;
      return std::string(k.choices[in.ConsumeIntegralInRange<std::size_t>(0, n - 1)]);
    }
  }
  return {};
}

// Up to 8 settings drawn from `in`, as a sweep's --set would give them. Each is offered to
// `keep(trial, key, value)`, where `trial` is the settings kept so far with it; a setting is
// kept where keep() returns true (it has made its allocators with `trial`), and "KEY=VALUE"
// is then added to `label`. A malformed value is refused where it is read, and skipped.
template <class Keep>
void draw_settings(FuzzedDataProvider& in, std::string& label, Keep&& keep)
{
  param_set settings;
  for (int n = in.ConsumeIntegralInRange<int>(0, 8); n > 0; --n) {
    key_values const& k = keys[in.ConsumeIntegralInRange<std::size_t>(0, keys.size() - 1)];
    std::string const value = pick_value(in, k);
    param_set trial = settings;
    try {
      trial.set(k.key, value);
    } catch (std::invalid_argument const&) {
      continue;
    }
    if (!keep(std::as_const(trial), k.key, value)) continue;
    settings = std::move(trial);
    label += " " + std::string(k.key) + "=" + value;
  }
}

}  // namespace fraglab::fuzz
