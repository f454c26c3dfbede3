#include <fraglab/runtime/trace/native_binary.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>
#include <fraglab/runtime/trace/detail/native_binary_layout.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <memory>
#include <ostream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fraglab::trace {
namespace {

using detail::binary_header_size;
using detail::load_le;
using detail::longest_record;
using detail::tag_alignment;
using detail::tag_free;
using detail::tag_release;
using detail::tag_stream;
using header_fields = detail::binary_header;
constexpr std::size_t header_size = binary_header_size;

[[noreturn]] void fail_at(std::string const& path, std::uint64_t offset, std::string const& what)
{
  throw input_error(path + ": byte " + std::to_string(offset) + ": " + what);
}

// Reads and checks the header; leaves `in` at the first record.
header_fields read_header(std::ifstream& in, std::string const& path)
{
  std::array<unsigned char, header_size> h{};
  in.read(reinterpret_cast<char*>(h.data()), 16);
  if (in.gcount() < 16) fail_at(path, static_cast<std::uint64_t>(in.gcount()), "truncated native binary header");
  if (std::memcmp(h.data(), native_binary_magic.data(), native_binary_magic.size()) != 0)
    fail_at(path, 0, "not a fraglab native binary trace (expected the magic \"FLTRACE\\0\")");
  auto const version = load_le<std::uint16_t>(h.data() + 8);
  auto const size = load_le<std::uint16_t>(h.data() + 10);
  if (version != native_binary_version)
    fail_at(path, 8, "native binary version " + std::to_string(version) + "; this fraglab reads version " +
                         std::to_string(native_binary_version));
  if (size < header_size) fail_at(path, 10, "header size " + std::to_string(size) + " is below " + std::to_string(header_size));
  std::vector<unsigned char> rest(size - 16);
  in.read(reinterpret_cast<char*>(rest.data()), static_cast<std::streamsize>(rest.size()));
  if (static_cast<std::size_t>(in.gcount()) < rest.size())
    fail_at(path, 16 + static_cast<std::uint64_t>(in.gcount()), "truncated native binary header");
  std::memcpy(h.data() + 16, rest.data(), header_size - 16);
  if (load_le<std::uint32_t>(h.data() + 12) != 0) fail_at(path, 12, "unknown header flags");
  header_fields f;
  f.events = load_le<std::uint64_t>(h.data() + 16);
  f.allocs = load_le<std::uint64_t>(h.data() + 24);
  f.frees = load_le<std::uint64_t>(h.data() + 32);
  f.slots = load_le<std::uint64_t>(h.data() + 40);
  f.recorded_failures = load_le<std::uint64_t>(h.data() + 48);
  if (f.allocs > f.events || f.frees > f.events - f.allocs)
    fail_at(path, 16, "header counts disagree: " + std::to_string(f.events) + " events but " + std::to_string(f.allocs) +
                          " allocations and " + std::to_string(f.frees) + " frees");
  if (f.slots > std::uint64_t{UINT32_MAX} + 1) fail_at(path, 40, "more than 2^32 slots");
  // Slot 0, never live, is where frees of unknown ids and releases go: any event needs it.
  if (f.events > 0 && f.slots == 0) fail_at(path, 40, "the header says 0 slots for " + std::to_string(f.events) + " events (slot 0 is always one)");
  // Corrupted counts must fail here, before anyone sizes a table by them: every slot but 0
  // is allocated at least once, and every record but a release takes at least two bytes.
  if (f.slots > f.allocs + 1)
    fail_at(path, 40, "the header says " + std::to_string(f.slots) + " slots for " + std::to_string(f.allocs) +
                          " allocations (at most allocations + 1)");
  auto const records_at = in.tellg();
  in.seekg(0, std::ios::end);
  auto const file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(records_at);
  std::uint64_t const record_bytes = file_size - static_cast<std::uint64_t>(records_at);
  std::uint64_t const releases = f.events - f.allocs - f.frees;
  if (f.allocs + f.frees > record_bytes / 2 || releases > record_bytes - 2 * (f.allocs + f.frees))
    fail_at(path, 16, "the header promises " + std::to_string(f.events) + " events, more than the " +
                          std::to_string(record_bytes) + " bytes after it can hold");
  return f;
}

// The file as it was when the trace was read: through the descriptor held since (pinned_file),
// refused where it was written in place since.
std::ifstream open_streamed(trace const& t)
{
  if (!t.pinned) return open_input(t.streamed_from, "a trace file", std::ios::binary);
  struct stat st{};
  if (::fstat(t.pinned->fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != t.pinned->size ||
      std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec != t.pinned->changed_ns)
    throw input_error(t.streamed_from + ": the file changed after it was opened");
  std::ifstream in("/proc/self/fd/" + std::to_string(t.pinned->fd), std::ios::binary);
  if (!in) throw input_error(t.streamed_from + ": cannot open for reading");
  return in;
}

class binary_decoder final : public event_batches {
 public:
  explicit binary_decoder(trace const& t) : path_(t.streamed_from), in_(open_streamed(t))
  {
    header_ = read_header(in_, path_);
    if (header_.events != t.streamed_events || header_.slots != t.slots)
      throw input_error(path_ + ": the file changed after it was opened");
    offset_ = static_cast<std::uint64_t>(in_.tellg());
    buffer_.resize(1 << 20);
    events_.resize(batch_size);
  }

  std::span<event const> next() override
  {
    std::size_t n = 0;
    while (n < events_.size() && decoded_ < header_.events) {
      if (end_ - at_ < longest_record) refill();
      if (at_ == end_) fail_at(path_, offset_, "truncated: the header promises " + std::to_string(header_.events) +
                                                  " events, the file ends after " + std::to_string(decoded_));
      decode(events_[n++]);
    }
    if (n == 0 && !finished_) finish();
    return {events_.data(), n};
  }

 private:
  void refill()
  {
    std::size_t const kept = end_ - at_;
    std::memmove(buffer_.data(), buffer_.data() + at_, kept);
    at_ = 0;
    end_ = kept;
    in_.read(reinterpret_cast<char*>(buffer_.data() + end_), static_cast<std::streamsize>(buffer_.size() - end_));
    end_ += static_cast<std::size_t>(in_.gcount());
  }

  std::uint64_t record_offset() const noexcept { return offset_; }

  unsigned char byte(std::uint64_t start, char const* what)
  {
    if (at_ == end_) fail_at(path_, start, std::string("truncated record: expected ") + what);
    ++offset_;
    return buffer_[at_++];
  }

  std::uint64_t varint(std::uint64_t start, char const* what)
  {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      unsigned char const b = byte(start, what);
      if (shift == 63 && b > 1) fail_at(path_, offset_ - 1, std::string(what) + " does not fit in 64 bits");
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
  }

  void decode(event& e)
  {
    std::uint64_t const start = record_offset();
    unsigned char const tag = byte(start, "an event tag");
    if (tag == tag_release) {
      e = event{op::release, 0};
      ++releases_;
      ++decoded_;
      return;
    }
    bool const is_free = (tag & tag_free) != 0;
    unsigned char const allowed = is_free ? tag_free : (tag_alignment | tag_stream);
    if ((tag & ~allowed & ~tag_free) != 0)
      fail_at(path_, start, "unknown event tag 0x" + hex(tag) + " (expected an allocation, a free or a release)");
    std::uint64_t const slot = varint(start, "a slot");
    if (slot >= header_.slots)
      fail_at(path_, start, "slot " + std::to_string(slot) + " is out of range (the header says " +
                                std::to_string(header_.slots) + " slots)");
    e = event{is_free ? op::free : op::alloc, static_cast<std::uint32_t>(slot)};
    if (is_free) {
      ++frees_;
    } else {
      if (slot == 0) fail_at(path_, start, "an allocation names slot 0, which is reserved for frees of ids never live");
      e.size = varint(start, "a size");
      if (e.size == 0) fail_at(path_, start, "expected a size of at least 1 byte, got 0");
      if (tag & tag_alignment) {
        unsigned char const log2 = byte(start, "an alignment");
        if (log2 >= 64) fail_at(path_, start, "alignment 2^" + std::to_string(log2) + " does not fit in 64 bits");
        e.alignment = std::size_t{1} << log2;
      }
      if (tag & tag_stream) e.stream = varint(start, "a stream");
      ++allocs_;
    }
    ++decoded_;
  }

  void finish()
  {
    finished_ = true;
    if (allocs_ != header_.allocs || frees_ != header_.frees)
      fail_at(path_, offset_, "the records hold " + std::to_string(allocs_) + " allocations and " + std::to_string(frees_) +
                                  " frees; the header says " + std::to_string(header_.allocs) + " and " +
                                  std::to_string(header_.frees));
    if (at_ < end_ || in_.peek() != std::char_traits<char>::eof())
      fail_at(path_, offset_, "unexpected bytes after the last of " + std::to_string(header_.events) + " events");
  }

  static std::string hex(unsigned char b)
  {
    char const digits[] = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }

  std::string path_;
  std::ifstream in_;
  header_fields header_;
  std::vector<unsigned char> buffer_;
  std::size_t at_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;  // file offset of buffer_[at_]
  std::vector<event> events_;
  std::uint64_t decoded_ = 0, allocs_ = 0, frees_ = 0, releases_ = 0;
  bool finished_ = false;
};

}  // namespace

bool has_native_binary_magic(std::string_view head) noexcept
{
  return head.substr(0, native_binary_magic.size()) == native_binary_magic;
}

pinned_file::~pinned_file()
{
  if (fd >= 0) ::close(fd);
}

trace open_native_binary(std::string const& path)
{
  std::ifstream in = open_input(path, "a trace file", std::ios::binary);
  header_fields const h = read_header(in, path);
  trace t;
  t.name = file_base_name(path);
  t.streamed_from = path;
  // A plain, uncompressed file is held open from here on (a spooled input already is).
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    auto pin = std::make_shared<pinned_file>();
    pin->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (pin->fd < 0 || ::fstat(pin->fd, &st) != 0) throw input_error(path + ": cannot open for reading");
    pin->size = static_cast<std::uint64_t>(st.st_size);
    pin->changed_ns = std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    std::array<char, native_binary_magic.size()> head{};
    if (::pread(pin->fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) &&
        has_native_binary_magic(std::string_view(head.data(), head.size())))
      t.pinned = std::move(pin);
  }
  t.streamed_events = h.events;
  t.allocs = h.allocs;
  t.frees = h.frees;
  t.releases = h.events - h.allocs - h.frees;
  t.slots = h.slots;
  t.recorded_failures = h.recorded_failures;
  return t;
}

std::unique_ptr<event_batches> decode_native_binary(trace const& t) { return std::make_unique<binary_decoder>(t); }

std::unique_ptr<event_batches> open_events(trace const& t)
{
  if (t.streamed()) return decode_native_binary(t);
  return memory_events(t.events);
}

namespace {

class native_binary_writer_impl final : public trace_writer {
 public:
  explicit native_binary_writer_impl(std::ostream& out) : out_(out), header_at_(out.tellp())
  {
    unsigned char const zeros[header_size] = {};
    out_.write(reinterpret_cast<char const*>(zeros), header_size);
  }

  void write(std::span<event const> events) override
  {
    chunk_.resize(events.size() * detail::longest_record);
    unsigned char* at = chunk_.data();
    for (event const& e : events) {
      if (e.kind == op::release) {
        *at++ = detail::tag_release;
        ++events_;
        continue;
      }
      if (e.slot >= file_slot_.size()) file_slot_.resize(std::size_t{e.slot} + 1, 0);
      std::uint32_t& s = file_slot_[e.slot];
      if (e.kind == op::alloc) {
        if (s == 0) {
          if (recycled_.empty()) {
            s = static_cast<std::uint32_t>(slots_++);
          } else {
            s = recycled_.back();
            recycled_.pop_back();
          }
        }
        at = detail::encode_allocation(at, s, e.size, e.alignment, e.stream);
        ++allocs_;
      } else {
        at = detail::encode_free(at, s);
        if (s != 0) recycled_.push_back(s);
        s = 0;
        ++frees_;
      }
      ++events_;
    }
    out_.write(reinterpret_cast<char const*>(chunk_.data()), at - chunk_.data());
  }

  void finish(trace const& summary) override
  {
    unsigned char h[header_size] = {};
    detail::encode_header(h, {events_, allocs_, frees_, slots_, summary.recorded_failures});
    auto const end = out_.tellp();
    out_.seekp(header_at_);
    out_.write(reinterpret_cast<char const*>(h), header_size);
    out_.seekp(end);
  }

 private:
  std::ostream& out_;
  std::ostream::pos_type header_at_;
  // Trace slot -> file slot; 0 while not live. File slot 0 stands for every id not live.
  std::vector<std::uint32_t> file_slot_;
  std::vector<std::uint32_t> recycled_;
  std::uint64_t slots_ = 1, events_ = 0, allocs_ = 0, frees_ = 0;
  std::vector<unsigned char> chunk_;
};

}  // namespace

std::unique_ptr<trace_writer> native_binary_writer(std::ostream& out)
{
  return std::make_unique<native_binary_writer_impl>(out);
}

void write_native_binary(std::ostream& out, trace const& t) { write_events(*native_binary_writer(out), t); }

}  // namespace fraglab::trace
