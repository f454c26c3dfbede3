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
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include "param_values.hpp"
#include "policy_ops_driver.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
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
  std::string label = spec + " (backend '" + backend.kind + "', capacity " + std::to_string(backend.capacity) + ")";
  fuzz::draw_settings(in, label, [&](param_set const& trial, std::string_view key, std::string const& value) {
    std::unique_ptr<any_allocator> made = try_build(spec, trial, backend);
    if (made == nullptr) return false;
    if (key == "device" || key == "device_memory_fraction")
      fuzz::bug(label, "accepted " + std::string(key) + "=" + value + ", which no backend here reads");
    a = std::move(made);
    return true;
  });
  fuzz::run_policy_ops(in, label, *a, real_memory ? fuzz::memory::real : fuzz::memory::simulated);
  return 0;
}
