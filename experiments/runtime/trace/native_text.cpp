#include <fraglab/runtime/trace/native_text.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <charconv>
#include <fstream>
#include <memory>
#include <ostream>
#include <string_view>
#include <unordered_map>

namespace fraglab::trace {
namespace {

class line_parser {
 public:
  line_parser(std::string_view line, std::string const& file, std::size_t number)
      : rest_(line), file_(file), number_(number)
  {
  }

  // The next whitespace-separated token, or empty at the end of the line.
  std::string_view token()
  {
    std::size_t const start = rest_.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) {
      rest_ = {};
      return {};
    }
    rest_.remove_prefix(start);
    std::size_t const end = rest_.find_first_of(" \t\r");
    std::string_view const t = rest_.substr(0, end);
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end);
    return t;
  }

  std::uint64_t integer(std::string_view what)
  {
    std::string_view const t = token();
    if (t.empty()) fail("expected " + std::string(what) + ", found the end of the line");
    std::uint64_t value = 0;
    std::string_view digits = t;
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
      base = 16;
    }
    auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (ec == std::errc::result_out_of_range) fail(std::string(what) + " " + quoted(t) + " does not fit in 64 bits");
    if (ec != std::errc{} || end != digits.data() + digits.size())
      fail("expected " + std::string(what) + " (a non-negative integer), got " + quoted(t));
    return value;
  }

  void expect_end()
  {
    std::string_view const t = token();
    if (!t.empty()) fail("unexpected " + quoted(t) + " after the event");
  }

  [[noreturn]] void fail(std::string const& what) const { throw input_error(file_, number_, what); }

 private:
  std::string_view rest_;
  std::string const& file_;
  std::size_t number_;
};

}  // namespace

trace read_native_text(std::istream& in, std::string const& file_name)
{
  trace t;
  t.name = file_base_name(file_name);
  std::unordered_map<std::uint64_t, std::uint32_t> slots;
  std::string line;
  std::size_t number = 0;
  auto slot_of = [&](std::uint64_t id, line_parser const& p) {
    auto [it, fresh] = slots.try_emplace(id, static_cast<std::uint32_t>(slots.size()));
    if (fresh && slots.size() > UINT32_MAX) p.fail("more than 2^32 distinct ids");
    return it->second;
  };
  while (std::getline(in, line)) {
    ++number;
    std::string_view view = number == 1 ? without_utf8_bom(line) : std::string_view(line);
    if (std::size_t const hash = view.find('#'); hash != std::string_view::npos) view = view.substr(0, hash);
    line_parser p(view, file_name, number);
    std::string_view const kind = p.token();
    if (kind.empty()) continue;
    if (kind == "a") {
      event e{op::alloc, 0};
      std::uint64_t const id = p.integer("an id");
      e.size = p.integer("a size");
      if (e.size == 0) p.fail("expected a size of at least 1 byte, got 0");
      line_parser tail = p;  // alignment and stream are optional
      if (!tail.token().empty()) {
        e.alignment = p.integer("an alignment");
        if (e.alignment == 0 || (e.alignment & (e.alignment - 1)) != 0)
          p.fail("expected an alignment that is a power of two, got " + std::to_string(e.alignment));
        line_parser tail2 = p;
        if (!tail2.token().empty()) e.stream = p.integer("a stream");
      }
      p.expect_end();
      e.slot = slot_of(id, p);
      t.events.push_back(e);
      ++t.allocs;
    } else if (kind == "f") {
      std::uint64_t const id = p.integer("an id");
      p.expect_end();
      t.events.push_back(event{op::free, slot_of(id, p)});
      ++t.frees;
    } else if (kind == "r") {
      p.expect_end();
      t.events.push_back(event{op::release, 0});
      ++t.releases;
    } else {
      p.fail("expected an event 'a ID SIZE [ALIGN] [STREAM]', 'f ID' or 'r', got " + quoted(kind));
    }
  }
  if (in.bad()) throw input_error(file_name, number, "read error");
  t.slots = slots.size();
  give_releases_a_slot(t);
  return t;
}

trace read_native_text_file(std::string const& path)
{
  std::ifstream in = open_input(path, "a trace file");
  return read_native_text(in, path);
}

namespace {

class native_text_writer_impl final : public trace_writer {
 public:
  native_text_writer_impl(std::ostream& out, std::string const& header_comment) : out_(out)
  {
    out_ << "# fraglab native trace: a ID SIZE [ALIGN] [STREAM] | f ID | r\n";
    if (!header_comment.empty()) out_ << "# " << header_comment << '\n';
  }

  void write(std::span<event const> events) override
  {
    for (event const& e : events) {
      if (e.kind == op::alloc) {
        out_ << "a " << e.slot << ' ' << e.size;
        if (e.alignment != 1 || e.stream != 0) out_ << ' ' << e.alignment;
        if (e.stream != 0) out_ << ' ' << e.stream;
        out_ << '\n';
      } else if (e.kind == op::free) {
        out_ << "f " << e.slot << '\n';
      } else {
        out_ << "r\n";
      }
    }
  }

  void finish(trace const&) override {}

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<trace_writer> native_text_writer(std::ostream& out, std::string const& header_comment)
{
  return std::make_unique<native_text_writer_impl>(out, header_comment);
}

void write_native_text(std::ostream& out, trace const& t, std::string const& header_comment)
{
  write_events(*native_text_writer(out, header_comment), t);
}

}  // namespace fraglab::trace
