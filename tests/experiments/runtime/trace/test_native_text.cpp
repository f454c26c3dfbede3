// The native text reader: the grammar, and FILE:LINE errors for every malformed input.
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include "support/error_text.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace fraglab::trace {
namespace {

trace parse(std::string const& text)
{
  std::istringstream in(text);
  return read_native_text(in, "t.trace");
}

std::string error_of(std::string const& text)
{
  return testing::error_text<input_error>([&] { parse(text); });
}

TEST(NativeText, ReadsEventsCommentsAndOptionalFields)
{
  auto t = parse("# header\n\na 7 100\na 0x10 64 4096 2  # aligned, stream 2\nf 7\n  f 0x10\na 7 8\n");
  ASSERT_EQ(t.events.size(), 5u);
  EXPECT_EQ(t.allocs, 3u);
  EXPECT_EQ(t.frees, 2u);
  EXPECT_EQ(t.slots, 2u);  // ids 7 and 16; 7 is reused after its free
  EXPECT_EQ(t.events[0].slot, 0u);
  EXPECT_EQ(t.events[0].size, 100u);
  EXPECT_EQ(t.events[0].alignment, 1u);
  EXPECT_EQ(t.events[1].slot, 1u);
  EXPECT_EQ(t.events[1].alignment, 4096u);
  EXPECT_EQ(t.events[1].stream, 2u);
  EXPECT_EQ(t.events[4].slot, 0u);
  EXPECT_EQ(t.name, "t.trace");
}

TEST(NativeText, RoundTripsThroughTheWriter)
{
  auto t = parse("a 0 100\na 1 64 4096 2\nf 0\na 2 1 1 5\nf 1\nf 2\n");
  std::ostringstream out;
  write_native_text(out, t, "comment");
  auto u = parse(out.str());
  ASSERT_EQ(u.events.size(), t.events.size());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    EXPECT_EQ(u.events[i].kind, t.events[i].kind);
    EXPECT_EQ(u.events[i].slot, t.events[i].slot);
    EXPECT_EQ(u.events[i].size, t.events[i].size);
    EXPECT_EQ(u.events[i].alignment, t.events[i].alignment);
    EXPECT_EQ(u.events[i].stream, t.events[i].stream);
  }
}

TEST(NativeText, MalformedLinesNameFileLineAndWhatWasExpected)
{
  EXPECT_EQ(error_of("a 1 10\nx 1\n"), "t.trace:2: expected an event 'a ID SIZE [ALIGN] [STREAM]', 'f ID' or 'r', got 'x'");
  EXPECT_EQ(error_of("a 1\n"), "t.trace:1: expected a size, found the end of the line");
  EXPECT_EQ(error_of("a 1 ten\n"), "t.trace:1: expected a size (a non-negative integer), got 'ten'");
  EXPECT_EQ(error_of("a 1 -5\n"), "t.trace:1: expected a size (a non-negative integer), got '-5'");
  EXPECT_EQ(error_of("a 1 0\n"), "t.trace:1: expected a size of at least 1 byte, got 0");
  EXPECT_EQ(error_of("a 1 99999999999999999999\n"), "t.trace:1: a size '99999999999999999999' does not fit in 64 bits");
  EXPECT_EQ(error_of("\n\na 1 8 3\n"), "t.trace:3: expected an alignment that is a power of two, got 3");
  EXPECT_EQ(error_of("f\n"), "t.trace:1: expected an id, found the end of the line");
  EXPECT_EQ(error_of("f 1 2\n"), "t.trace:1: unexpected '2' after the event");
  EXPECT_EQ(error_of("a 1 8 8 0 extra\n"), "t.trace:1: unexpected 'extra' after the event");
  // What a message quotes of the input: bytes that are not printable as \xNN, and no more
  // than 60 of them.
  EXPECT_EQ(error_of("a 1 \x7f\xc3\xa9\n"), "t.trace:1: expected a size (a non-negative integer), got '\\x7f\\xc3\\xa9'");
  EXPECT_EQ(error_of(std::string(100, 'z') + "\n"),
            "t.trace:1: expected an event 'a ID SIZE [ALIGN] [STREAM]', 'f ID' or 'r', got '" + std::string(60, 'z') + "'... (100 bytes)");
}

TEST(NativeText, EmptyInputIsAnEmptyTrace)
{
  EXPECT_TRUE(parse("").events.empty());
  EXPECT_TRUE(parse("# only a comment\n").events.empty());
}

}  // namespace
}  // namespace fraglab::trace
