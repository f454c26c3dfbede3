// Random parameter settings, as a sweep's --set gives them, on every named policy and every
// composable index and fit, then random operations (policy_ops_driver.hpp). fuzz_policy_ops
// covers each policy at its own defaults; sweeps run the others, which is where a rule's
// corner (a quantum of 1, a header larger than the minimum, a split ratio of 7.3, buddy
// coalescing under a bins index) would otherwise first meet a user.
//
// The backend is the policy's own, the simulated one, the heap, or the host's real memory, where
// the operations also write into every block (policy_ops_driver.hpp).
//
// A setting is kept only where make_composition accepts it; one it refuses must say why
// (std::invalid_argument with a message), as the command line shows it. The allocator built
// from the settings kept must then keep every invariant of the operations' checks.
#include "experiments/params/param_set.hpp"
#include "experiments/registry/composition.hpp"
#include "policy_ops_driver.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace fraglab;

std::vector<std::string> const& every_spec()
{
  static std::vector<std::string> const specs = [] {
    std::vector<std::string> v = fuzz::named_policies();
    for (auto const& [index, fit] : composable_pairs())
      v.push_back("compose:index=" + std::string(index) + ",fit=" + std::string(fit));
    return v;
  }();
  return specs;
}

// What a key's values look like. Values are drawn mostly from the key's valid range, and
// now and then from just outside it, so that validation is exercised as well as the rules.
enum class value_kind { bytes, power_of_two, ratio, factor, fraction, flag, count, choice };

struct key_values {
  std::string_view key;
  value_kind kind;
  std::array<std::string_view, 5> choices{};  // value_kind::choice
  unsigned low = 0, high = 0;                  // value_kind::count
};

// The known keys (experiments/params/param_set.cpp). The CUDA backends' own (device,
// device_memory_fraction) are drawn too: no backend here reads them, so each must be refused
// with its reason (check_backend_keys), never ignored.
constexpr std::array keys{
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

std::string pick_value(FuzzedDataProvider& in, key_values const& k)
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

// The allocator the spec and settings make, or null where they are refused; a refusal, by
// make_composition or by the allocator's own validation, must say why.
std::unique_ptr<any_allocator> try_build(std::string const& spec, param_set const& p, backend_choice const& b)
{
  try {
    return make_composition(spec, p, b)->make();
  } catch (std::invalid_argument const& e) {
    if (std::string_view(e.what()).empty()) fuzz::bug(spec, "a refused setting said nothing");
    return nullptr;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  FuzzedDataProvider in(data, size);
  auto const& specs = every_spec();
  std::string const& spec = specs[in.ConsumeIntegralInRange<std::size_t>(0, specs.size() - 1)];
  backend_choice backend;
  backend.kind = std::array<char const*, 4>{"", "simulated", "heap", "host"}[in.ConsumeIntegralInRange<int>(0, 3)];
  bool const real_memory = backend.kind == "host";
  // Real memory is always bounded, so that an input's acquisitions fit the fuzzer's RSS limit.
  if (in.ConsumeBool() || real_memory) backend.capacity = in.ConsumeIntegralInRange<std::size_t>(1 << 20, std::size_t{1} << 28);

  std::unique_ptr<any_allocator> a = try_build(spec, {}, backend);
  if (a == nullptr) return 0;  // a policy that needs another backend

  // Each setting kept replaces the allocator by one made with it.
  param_set settings;
  std::string label = spec + " (backend '" + backend.kind + "', capacity " + std::to_string(backend.capacity) + ")";
  for (int n = in.ConsumeIntegralInRange<int>(0, 8); n > 0; --n) {
    key_values const& k = keys[in.ConsumeIntegralInRange<std::size_t>(0, keys.size() - 1)];
    std::string const value = pick_value(in, k);
    param_set trial = settings;
    try {
      trial.set(k.key, value);
    } catch (std::invalid_argument const&) {
      continue;  // a malformed value, refused where it is read
    }
    std::unique_ptr<any_allocator> made = try_build(spec, trial, backend);
    if (made == nullptr) continue;
    if (k.key == "device" || k.key == "device_memory_fraction")
      fuzz::bug(label, "accepted " + std::string(k.key) + "=" + value + ", which no backend here reads");
    a = std::move(made);
    settings = std::move(trial);
    label += " " + std::string(k.key) + "=" + value;
  }
  fuzz::run_policy_ops(in, label, *a, real_memory ? fuzz::memory::real : fuzz::memory::simulated);
  return 0;
}
