// The native text reader on any bytes.
#include "experiments/trace/native_text.hpp"
#include "fuzz_input.hpp"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  std::istringstream in(std::string(reinterpret_cast<char const*>(data), size));
  try {
    fraglab::fuzz::check_events(fraglab::trace::read_native_text(in, "fuzz.trace"));
  } catch (fraglab::input_error const&) {
  }
  return 0;
}
