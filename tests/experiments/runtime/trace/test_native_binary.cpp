// The native binary format: exact bytes of the encoding, a round trip through the writer
// that keeps replay semantics while recycling slots, batches that stream, and a byte
// offset for every malformed file.
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/native_binary.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include "support/error_text.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace fraglab::trace {
namespace {

std::string temp_path(std::string const& name) { return ::testing::TempDir() + "fraglab_" + name; }

trace parse_text(std::string const& text)
{
  std::istringstream in(text);
  return read_native_text(in, "t.trace");
}

std::string encode(trace const& t)
{
  std::ostringstream out;
  write_native_binary(out, t);
  return out.str();
}

std::string put_file(std::string const& name, std::string const& bytes)
{
  std::string const path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<event> all_events(trace const& t)
{
  std::vector<event> v;
  for_each_event(t, [&](event const& e) { v.push_back(e); });
  return v;
}

std::string error_of(std::string const& bytes)
{
  std::string const what = testing::error_text<input_error>([&] { all_events(read_trace(put_file("bad.fbin", bytes))); });
  auto const at = what.find(": byte ");
  return at == std::string::npos ? what : what.substr(at + 2);  // without the temporary directory
}

// A header by hand: magic, version 1, size 64, counts.
std::string header(std::uint64_t events, std::uint64_t allocs, std::uint64_t frees, std::uint64_t slots)
{
  std::string h("FLTRACE\0", 8);
  auto le = [&](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) h += static_cast<char>(v >> (8 * i));
  };
  le(1, 2);
  le(64, 2);
  le(0, 4);
  for (std::uint64_t v : {events, allocs, frees, slots, std::uint64_t{0}, std::uint64_t{0}}) le(v, 8);
  return h;
}

TEST(NativeBinary, EncodesEachEventCompactly)
{
  // a 5 300 | a 6 16 align 4096 stream 2 | f 5 | f 6
  std::string const bytes = encode(parse_text("a 5 300\na 6 16 4096 2\nf 5\nf 6\n"));
  std::string const expected = header(4, 2, 2, 3) +
                               std::string("\x00\x01\xac\x02", 4) +            // alloc, slot 1, 300 as LEB128
                               std::string("\x06\x02\x10\x0c\x02", 5) +        // alloc+align+stream, slot 2, 16, 2^12, 2
                               std::string("\x01\x01", 2) + std::string("\x01\x02", 2);  // frees of slots 1 and 2
  EXPECT_EQ(bytes, expected);
}

TEST(NativeBinary, RoundTripRecyclesSlotsAndKeepsReplaySemantics)
{
  // Id 1 is freed and its slot reused by id 3; "f 9" frees an id never live; "a 3" twice
  // is an allocation under a live id. All must survive for replay to count them.
  trace const t = parse_text("a 1 64\na 2 32\nf 1\na 3 128 256\nf 9\na 3 8\nf 3\nf 2\n");
  std::string const path = put_file("rt.fbin", encode(t));
  EXPECT_EQ(detect_format(path), trace_format::native_binary);
  trace const u = read_trace(path);
  EXPECT_TRUE(u.streamed());
  EXPECT_EQ(u.event_count(), 8u);
  EXPECT_EQ(u.allocs, 4u);
  EXPECT_EQ(u.frees, 4u);
  EXPECT_EQ(u.slots, 3u);  // the never-live slot 0, and two ids live at once
  std::vector<event> const e = all_events(u);
  ASSERT_EQ(e.size(), 8u);
  std::vector<std::uint32_t> const slots{1, 2, 1, 1, 0, 1, 1, 2};
  for (std::size_t i = 0; i < e.size(); ++i) {
    EXPECT_EQ(e[i].kind, t.events[i].kind) << i;
    EXPECT_EQ(e[i].slot, slots[i]) << i;
    EXPECT_EQ(e[i].size, t.events[i].size) << i;
    EXPECT_EQ(e[i].alignment, t.events[i].alignment) << i;
  }
  // Writing the streamed trace again gives the same bytes.
  EXPECT_EQ(encode(u), encode(t));
}

TEST(NativeBinary, LongTracesArriveInBatchesOfAtMostTheBatchSize)
{
  trace t;
  std::size_t const n = 3 * event_batches::batch_size + 5;
  for (std::size_t i = 0; i < n; ++i) {
    t.events.push_back({op::alloc, 0, i + 1});
    t.events.push_back({op::free, 0});
  }
  t.slots = 1;
  t.allocs = t.frees = n;
  trace const u = read_trace(put_file("long.fbin", encode(t)));
  std::vector<std::size_t> sizes;
  std::uint64_t size_sum = 0;
  for_each_batch(u, [&](std::span<event const> b) {
    sizes.push_back(b.size());
    for (event const& e : b) size_sum += e.size;
  });
  ASSERT_EQ(sizes.size(), 7u);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(sizes[i], event_batches::batch_size);
  EXPECT_EQ(sizes.back(), 10u);
  EXPECT_EQ(size_sum, n * (n + 1) / 2);
}

TEST(NativeBinary, MalformedFilesNameTheByteOffset)
{
  std::string const ok = header(2, 1, 1, 2) + std::string("\x00\x01\x08\x01\x01", 5);
  EXPECT_EQ(error_of(ok), "no error");
  EXPECT_EQ(error_of(std::string("FLTRACE\0\x02\x00", 10)), "byte 10: truncated native binary header");
  // Detection sends a file without the magic to another reader; the binary reader itself
  // refuses it.
  try {
    open_native_binary(put_file("magic.fbin", "FLTRACE\1" + ok.substr(8)));
    ADD_FAILURE() << "no error";
  } catch (input_error const& e) {
    EXPECT_NE(std::string(e.what()).find(": byte 0: not a fraglab native binary trace (expected the magic \"FLTRACE\\0\")"),
              std::string::npos)
        << e.what();
  }
  std::string v2 = ok;
  v2[8] = 2;
  EXPECT_EQ(error_of(v2), "byte 8: native binary version 2; this fraglab reads version 1");
  EXPECT_EQ(error_of(header(1, 1, 1, 2)), "byte 16: header counts disagree: 1 events but 1 allocations and 1 frees");
  EXPECT_EQ(error_of(header(1, 0, 0, 0) + "\x08"), "byte 40: the header says 0 slots for 1 events (slot 0 is always one)");
  // A release: the tag alone, one byte, in slot 0 (never live); an allocation makes it a trace.
  EXPECT_EQ(error_of(header(2, 1, 0, 2) + std::string("\x00\x01\x08\x08", 4)), "no error");
  EXPECT_NE(error_of(header(1, 0, 0, 1) + "\x08").find("no allocation in it, only 0 frees and 1 cache releases"), std::string::npos);
  // Corrupted counts fail at the header, before any table is sized by them.
  EXPECT_EQ(error_of(ok.substr(0, 64 + 3)), "byte 16: the header promises 2 events, more than the 3 bytes after it can hold");
  EXPECT_EQ(error_of(header(2, 1, 1, 1000) + ok.substr(64)),
            "byte 40: the header says 1000 slots for 1 allocations (at most allocations + 1)");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x00\x01", 2)), "byte 64: truncated record: expected a size");
  EXPECT_EQ(error_of(header(2, 1, 1, 2) + std::string("\x00\x01\x80\x80\x01", 5)),
            "byte 69: truncated: the header promises 2 events, the file ends after 1");
  EXPECT_EQ(error_of(ok.substr(0, 64 + 4)), "byte 67: truncated record: expected a slot");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x10\x01\x08", 3)),
            "byte 64: unknown event tag 0x10 (expected an allocation, a free or a release)");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x03\x01\x08", 3)),
            "byte 64: unknown event tag 0x03 (expected an allocation, a free or a release)");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x00\x05\x08", 3)),
            "byte 64: slot 5 is out of range (the header says 2 slots)");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x00\x01\x00", 3)),
            "byte 64: expected a size of at least 1 byte, got 0");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x00\x00\x08", 3)),
            "byte 64: an allocation names slot 0, which is reserved for frees of ids never live");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x00\x01", 2) + std::string(9, '\xff') + "\x7f"),
            "byte 75: a size does not fit in 64 bits");
  EXPECT_EQ(error_of(header(1, 1, 0, 2) + std::string("\x02\x01\x08\x40", 4)),
            "byte 64: alignment 2^64 does not fit in 64 bits");
  EXPECT_EQ(error_of(ok + "x"), "byte 69: unexpected bytes after the last of 2 events");
  EXPECT_EQ(error_of(header(2, 1, 1, 2) + std::string("\x00\x01\x08\x00\x01\x08", 6)),
            "byte 70: the records hold 2 allocations and 0 frees; the header says 1 and 1");
}

}  // namespace
}  // namespace fraglab::trace
