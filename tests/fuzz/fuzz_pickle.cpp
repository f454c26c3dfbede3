// The restricted pickle reader on any bytes: plain data or an input_error, never an import
// or a call, never a crash or an unbounded allocation.
#include "experiments/pickle/pickle_reader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  try {
    (void)fraglab::pickle::parse({data, size}, "fuzz.pickle");
  } catch (fraglab::input_error const&) {
  }
  return 0;
}
