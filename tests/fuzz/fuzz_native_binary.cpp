// The native binary reader on any bytes (the magic is prepended half of the time, so that
// most inputs get past it), and the writer on what it accepts: re-encoding a decoded trace
// must decode to the same events.
#include <fraglab/runtime/trace/native_binary.hpp>
#include "fuzz_input.hpp"

#include <sstream>
#include <vector>

namespace {

std::vector<fraglab::trace::event> events_of(fraglab::trace::trace const& t)
{
  std::vector<fraglab::trace::event> v;
  fraglab::trace::for_each_event(t, [&](fraglab::trace::event const& e) { v.push_back(e); });
  return v;
}

bool same(fraglab::trace::event const& a, fraglab::trace::event const& b)
{
  return a.kind == b.kind && a.size == b.size && a.alignment == b.alignment && a.stream == b.stream;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  std::string bytes(reinterpret_cast<char const*>(data), size);
  if (size > 0 && data[0] % 2 == 0) bytes = std::string(fraglab::trace::native_binary_magic) + bytes.substr(1);
  fraglab::fuzz::memory_file file(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
  try {
    auto const t = fraglab::trace::open_native_binary(file.path());
    fraglab::fuzz::check_events(t);
    std::ostringstream again;
    fraglab::trace::write_native_binary(again, t);
    std::string const encoded = again.str();
    fraglab::fuzz::memory_file second(reinterpret_cast<std::uint8_t const*>(encoded.data()), encoded.size());
    auto const a = events_of(t), b = events_of(fraglab::trace::open_native_binary(second.path()));
    if (a.size() != b.size()) fraglab::fuzz::bug("re-encoding changed the number of events");
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) fraglab::fuzz::bug("re-encoding changed an event");
  } catch (fraglab::input_error const&) {
  }
  return 0;
}
