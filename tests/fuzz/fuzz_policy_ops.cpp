// Random operation sequences against every named policy (presets included), as the registry
// builds them with their own parameters, under an optional capacity: policy_ops_driver.hpp
// says which operations and what each must keep true. fuzz_policy_params varies the
// parameters as well.
#include <fraglab/runtime/registry/composition.hpp>
#include "policy_ops_driver.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  static std::vector<std::string> const names = fraglab::fuzz::named_policies();
  FuzzedDataProvider in(data, size);
  std::string const& name = names[in.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)];
  fraglab::backend_choice backend;
  if (in.ConsumeBool()) backend.capacity = in.ConsumeIntegralInRange<std::size_t>(1 << 20, std::size_t{1} << 28);
  auto a = fraglab::make_composition(name, {}, backend)->make();
  fraglab::fuzz::run_policy_ops(in, name, *a);
  return 0;
}
