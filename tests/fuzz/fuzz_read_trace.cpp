// Any bytes through format detection and whichever reader it picks (native text, native
// binary, RMM CSV, PyTorch snapshot, TensorFlow BFC log), then one full pass over the events.
#include <fraglab/runtime/trace/read_trace.hpp>
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  fraglab::fuzz::memory_file file(data, size);
  try {
    fraglab::fuzz::check_events(fraglab::trace::read_trace(file.path()));
  } catch (fraglab::input_error const&) {
  }
  return 0;
}
