#include "experiments/trace/read_trace.hpp"

#include "experiments/trace/input_error.hpp"
#include "experiments/trace/input_file.hpp"
#include "experiments/trace/native_binary.hpp"
#include "experiments/trace/native_text.hpp"
#include "experiments/trace/rmm_csv.hpp"

#include <fstream>
#include <unordered_map>

namespace fraglab::trace {

std::string_view to_string(trace_format f) noexcept
{
  switch (f) {
    case trace_format::native_text: return "native text";
    case trace_format::native_binary: return "native binary";
    case trace_format::rmm_csv: return "RMM logging CSV";
    case trace_format::pytorch_snapshot: return "PyTorch memory snapshot";
  }
  return "?";
}

trace_format detect_format(std::string const& path)
{
  std::ifstream in = open_input(path, "a trace file", std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof head);
  std::string_view const h(head, static_cast<std::size_t>(in.gcount()));
  // Every format has at least a header or one event: an empty file is a capture that
  // failed, not a trace with nothing in it.
  if (h.empty())
    throw input_error(path + ":1: empty file: expected a trace (native text, native binary, RMM CSV or a PyTorch snapshot)");
  if (has_native_binary_magic(h)) return trace_format::native_binary;
  if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x80 && static_cast<unsigned char>(h[1]) >= 2)
    return trace_format::pytorch_snapshot;
  if (without_utf8_bom(h).substr(0, 18) == "Thread,Time,Action") return trace_format::rmm_csv;
  // Both text formats are lines of printable characters; a control byte other than white
  // space means a file of some other binary format, which the text reader would quote.
  for (char const c : h)
    if (auto const u = static_cast<unsigned char>(c); u < 0x20 && (u < '\t' || u > '\r'))
      throw input_error(path + ": binary data, not a trace (native text, native binary, RMM CSV or a PyTorch snapshot); it starts " +
                        quoted(h.substr(0, 16)));
  return trace_format::native_text;
}

trace snapshot_to_trace(pytorch_snapshot const& s)
{
  trace t;
  t.name = s.name;
  std::unordered_map<std::uint64_t, std::uint32_t> slots;
  auto slot = [&](std::uint64_t address) {
    return slots.try_emplace(address, static_cast<std::uint32_t>(slots.size())).first->second;
  };
  for (auto const& d : s.devices) {
    for (auto const& seg : d.initial_segments)
      for (auto const& b : seg.live) {
        t.events.push_back({op::alloc, slot(b.address), b.requested, 1, seg.stream});
        ++t.allocs;
      }
    for (auto const& e : d.events) {
      if (e.op == snapshot_op::alloc) {
        t.events.push_back({op::alloc, slot(e.address), e.size, 1, e.stream});
        ++t.allocs;
      } else if (e.op == snapshot_op::free) {
        t.events.push_back({op::free, slot(e.address), 0, 1, e.stream});
        ++t.frees;
      }
    }
  }
  t.slots = slots.size();
  return t;
}

namespace {

trace read_any_format(std::string const& path)
{
  switch (detect_format(path)) {
    case trace_format::native_binary: return open_native_binary(path);
    case trace_format::pytorch_snapshot: return snapshot_to_trace(read_pytorch_snapshot(path));
    case trace_format::rmm_csv: {
      std::ifstream in = open_input(path, "a trace file");
      return read_rmm_csv(in, path);
    }
    case trace_format::native_text: break;
  }
  return read_native_text_file(path);
}

}  // namespace

trace read_trace(std::string const& path)
{
  trace t = read_any_format(path);
  // As with an empty file: a header alone, or comments alone, is a capture that recorded
  // nothing, and its rows of zeros would enter a table as a trace without fragmentation.
  if (t.event_count() == 0) throw input_error(path + ": no events: expected at least one allocation");
  return t;
}

}  // namespace fraglab::trace
