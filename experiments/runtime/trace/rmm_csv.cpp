#include <fraglab/runtime/trace/rmm_csv.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <charconv>
#include <cstdio>
#include <istream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fraglab::trace {
namespace {

// A field without the double quotes a spreadsheet puts around every field it saves (RMM
// writes none, and no field of its holds a comma or a quote).
std::string_view unquoted(std::string_view field)
{
  return field.size() >= 2 && field.front() == '"' && field.back() == '"' ? field.substr(1, field.size() - 2) : field;
}

std::vector<std::string_view> split_fields(std::string_view line)
{
  std::vector<std::string_view> f;
  while (true) {
    std::size_t const comma = line.find(',');
    f.push_back(unquoted(line.substr(0, comma)));
    if (comma == std::string_view::npos) return f;
    line.remove_prefix(comma + 1);
  }
}

// The header, its fields quoted or not.
bool is_header(std::string_view line)
{
  std::string joined;
  for (std::string_view const f : split_fields(line)) joined.append(joined.empty() ? "" : ",").append(f);
  return joined == rmm_csv_header;
}

bool parse_u64(std::string_view s, int base, std::uint64_t& out)
{
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return false;
  auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc{} && end == s.data() + s.size();
}

bool valid_time(std::string_view t)
{
  // HH:MM:SS.ffffff (spdlog's %H:%M:%S.%f), a time of day: hours below 24, minutes and
  // seconds below 60.
  if (t.size() != 15 || t[2] != ':' || t[5] != ':' || t[8] != '.') return false;
  for (std::size_t i : {0, 1, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14})
    if (t[i] < '0' || t[i] > '9') return false;
  auto const two = [&](std::size_t i) { return (t[i] - '0') * 10 + (t[i + 1] - '0'); };
  return two(0) < 24 && two(3) < 60 && two(6) < 60;
}

}  // namespace

trace read_rmm_csv(std::istream& in, std::string const& file_name)
{
  trace t;
  t.name = file_base_name(file_name);
  std::string line;
  std::size_t number = 0;
  auto fail = [&](std::string const& what) { throw input_error(file_name, number, what); };
  if (!std::getline(in, line)) throw input_error(file_name, 1, "empty file: expected the header '" + std::string(rmm_csv_header) + "'");
  number = 1;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  line = std::string(without_utf8_bom(line));
  if (!is_header(line)) fail("expected the header '" + std::string(rmm_csv_header) + "', got " + quoted(line));
  std::unordered_map<std::uint64_t, std::uint32_t> slots;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto const f = split_fields(line);
    if (f.size() != 6) fail("expected 6 comma-separated fields, got " + std::to_string(f.size()));
    std::uint64_t thread = 0, pointer = 0, size = 0, stream = 0;
    if (!parse_u64(f[0], 10, thread)) fail("expected a thread id, got " + quoted(f[0]));
    if (!valid_time(f[1])) fail("expected a time HH:MM:SS.ffffff, got " + quoted(f[1]));
    if (!parse_u64(f[4], 10, size)) fail("expected a size in bytes, got " + quoted(f[4]));
    if (!parse_u64(f[5], 16, stream)) fail("expected a stream in hex, got " + quoted(f[5]));
    std::string_view const action = f[2];
    if (action == "allocate failure") {
      ++t.recorded_failures;
      continue;
    }
    if (action != "allocate" && action != "free")
      fail("expected the action allocate, free or 'allocate failure', got " + quoted(action));
    if (!parse_u64(f[3], 16, pointer) || pointer == 0) fail("expected a non-null pointer in hex, got " + quoted(f[3]));
    auto [it, fresh] = slots.try_emplace(pointer, static_cast<std::uint32_t>(slots.size()));
    if (action == "allocate") {
      if (size == 0) fail("expected a size of at least 1 byte, got 0");
      t.events.push_back({op::alloc, it->second, size, 1, stream});
      ++t.allocs;
    } else {
      t.events.push_back({op::free, it->second, 0, 1, stream});
      ++t.frees;
    }
    (void)fresh;
  }
  if (in.bad()) throw input_error(file_name, number, "read error");
  t.slots = slots.size();
  return t;
}

namespace {

class rmm_csv_writer_impl final : public trace_writer {
 public:
  explicit rmm_csv_writer_impl(std::ostream& out) : out_(out) { out_ << rmm_csv_header << '\n'; }

  void write(std::span<event const> events) override
  {
    char time[32], pointer[32], stream[32];
    for (event const& e : events) {
      ++tick_;  // one microsecond per event, from 00:00:00
      std::uint64_t const us = tick_ % 1'000'000, s = tick_ / 1'000'000;
      std::snprintf(time, sizeof time, "%02llu:%02llu:%02llu.%06llu", static_cast<unsigned long long>(s / 3600 % 24),
                    static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60),
                    static_cast<unsigned long long>(us));
      if (e.kind == op::release)
        throw std::invalid_argument("event " + std::to_string(tick_) +
                                    " releases the allocator's cache, which RMM logging CSV has no action for: write native "
                                    "text or binary");
      if (e.kind == op::alloc && e.alignment > 1)
        throw std::invalid_argument("event " + std::to_string(tick_) + " asks for alignment " +
                                    std::to_string(e.alignment) +
                                    ", which RMM logging CSV has no column for: write native text or binary");
      if (e.slot >= size_of_.size()) size_of_.resize(std::size_t{e.slot} + 1, 0);
      std::size_t const size = e.kind == op::alloc ? e.size : size_of_[e.slot];
      if (e.kind == op::alloc) size_of_[e.slot] = e.size;
      std::snprintf(pointer, sizeof pointer, "0x%llx", static_cast<unsigned long long>((std::uint64_t{e.slot} + 1) * 16));
      std::snprintf(stream, sizeof stream, "%llx", static_cast<unsigned long long>(e.stream));
      out_ << 1 << ',' << time << ',' << (e.kind == op::alloc ? "allocate" : "free") << ',' << pointer << ',' << size
           << ',' << stream << '\n';
    }
  }

  void finish(trace const&) override {}

 private:
  std::ostream& out_;
  std::vector<std::size_t> size_of_;  // by slot, the size it was last allocated with
  std::uint64_t tick_ = 0;
};

}  // namespace

std::unique_ptr<trace_writer> rmm_csv_writer(std::ostream& out) { return std::make_unique<rmm_csv_writer_impl>(out); }

void write_rmm_csv(std::ostream& out, trace const& t) { write_events(*rmm_csv_writer(out), t); }

}  // namespace fraglab::trace
