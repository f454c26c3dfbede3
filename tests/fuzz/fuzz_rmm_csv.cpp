// The RMM logging CSV reader on any bytes.
#include <fraglab/runtime/trace/rmm_csv.hpp>
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  return fraglab::fuzz::check_stream_reader(
      data, size, [](std::istream& in) { return fraglab::trace::read_rmm_csv(in, "fuzz.csv"); });
}
