// RMM's logging CSV: the exact format, round trips, FILE:LINE errors, and format detection.
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/rmm_csv.hpp>
#include "support/error_text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace fraglab::trace {
namespace {

trace parse(std::string const& text)
{
  std::istringstream in(text);
  return read_rmm_csv(in, "r.csv");
}

std::string error_of(std::string const& text)
{
  return testing::error_text<input_error>([&] { parse(text); });
}

constexpr char const* header = "Thread,Time,Action,Pointer,Size,Stream\n";

TEST(RmmCsv, ReadsAllocationsFreesStreamsAndCountsRecordedFailures)
{
  auto t = parse(std::string(header) +
                 "140204,08:00:00.000001,allocate,0x7f5a10000000,1024,0x0\n"
                 "140204,08:00:00.000002,allocate,0x7f5a10000400,64,7f00\n"
                 "140204,08:00:00.000003,allocate failure,(nil),999999999,0\n"
                 "140205,08:00:00.000004,free,0x7f5a10000000,1024,0x0\n"
                 "140205,08:00:00.000005,allocate,0x7f5a10000000,32,0x0\r\n");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.allocs, 3u);
  EXPECT_EQ(t.frees, 1u);
  EXPECT_EQ(t.recorded_failures, 1u);
  EXPECT_EQ(t.slots, 2u);  // the first pointer is reused after its free
  EXPECT_EQ(t.events[1].stream, 0x7f00u);
  EXPECT_EQ(t.events[3].slot, t.events[0].slot);
  EXPECT_EQ(t.events[3].size, 32u);
}

TEST(RmmCsv, RoundTripsThroughTheWriter)
{
  auto t = parse(std::string(header) + "1,00:00:00.000001,allocate,0x10,100,0\n1,00:00:00.000002,allocate,0x20,5,a\n"
                                       "1,00:00:00.000003,free,0x10,100,0\n1,00:00:00.000004,free,0x20,5,a\n");
  std::ostringstream out;
  write_rmm_csv(out, t);
  EXPECT_EQ(out.str(), std::string(header) +
                           "1,00:00:00.000001,allocate,0x10,100,0\n1,00:00:00.000002,allocate,0x20,5,a\n"
                           "1,00:00:00.000003,free,0x10,100,0\n1,00:00:00.000004,free,0x20,5,a\n");
}

// RMM's log has no alignment column: writing one would lose it without a word.
TEST(RmmCsv, TheWriterRefusesAnAlignmentItCannotRecord)
{
  trace t;
  t.events = {{op::alloc, 0, 100, 1, 0}, {op::alloc, 1, 64, 256, 0}, {op::free, 0, 0, 1, 0}};
  t.slots = 2;
  std::ostringstream out;
  try {
    write_rmm_csv(out, t);
    ADD_FAILURE() << "wrote an alignment of 256 as nothing";
  } catch (std::invalid_argument const& e) {
    EXPECT_STREQ(e.what(), "event 2 asks for alignment 256, which RMM logging CSV has no column for: write native text or binary");
  }
  t.events[1].alignment = 1;
  std::ostringstream fine;
  EXPECT_NO_THROW(write_rmm_csv(fine, t));
}

TEST(RmmCsv, MalformedInputNamesFileLineAndWhatWasExpected)
{
  EXPECT_EQ(error_of(""), "r.csv:1: empty file: expected the header 'Thread,Time,Action,Pointer,Size,Stream'");
  EXPECT_EQ(error_of("Thread,Time,Action\n"),
            "r.csv:1: expected the header 'Thread,Time,Action,Pointer,Size,Stream', got 'Thread,Time,Action'");
  std::string const h = header;
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,allocate,0x10\n"), "r.csv:2: expected 6 comma-separated fields, got 4");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,allocate,0x10,12a,0\n"), "r.csv:2: expected a size in bytes, got '12a'");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,allocate,0x10,-5,0\n"), "r.csv:2: expected a size in bytes, got '-5'");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,allocate,0x10,99999999999999999999,0\n"),
            "r.csv:2: expected a size in bytes, got '99999999999999999999'");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,allocate,0x10,0,0\n"), "r.csv:2: expected a size of at least 1 byte, got 0");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,reallocate,0x10,5,0\n"),
            "r.csv:2: expected the action allocate, free or 'allocate failure', got 'reallocate'");
  EXPECT_EQ(error_of(h + "1,8:00:00,allocate,0x10,5,0\n"), "r.csv:2: expected a time HH:MM:SS.ffffff, got '8:00:00'");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,free,zz,5,0\n"), "r.csv:2: expected a non-null pointer in hex, got 'zz'");
  EXPECT_EQ(error_of(h + "x,08:00:00.000001,free,0x10,5,0\n"), "r.csv:2: expected a thread id, got 'x'");
  EXPECT_EQ(error_of(h + "1,08:00:00.000001,free,0x10,5,0g\n"), "r.csv:2: expected a stream in hex, got '0g'");
}

// Writes `content` to NAME in the test's temporary directory and returns the path.
std::string write(std::string const& name, std::string const& content)
{
  std::string const path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(ReadTrace, DetectsTheFormatFromTheContentNotTheName)
{
  auto const csv = write("looks_native.trace", std::string(header) + "1,00:00:00.000001,allocate,0x10,100,0\n");
  auto const text = write("looks_csv.csv", "a 1 100\nf 1\n");
  // pickle.dumps({'segments': [], 'device_traces': []}, protocol=2)
  auto const pickle = write("snap.bin", std::string("\x80\x02}q\x00(X\x08\x00\x00\x00"
                                                    "segmentsq\x01]q\x02X\x0d\x00\x00\x00"
                                                    "device_tracesq\x03]q\x04u.",
                                                    49));
  EXPECT_EQ(detect_format(csv), trace_format::rmm_csv);
  EXPECT_EQ(detect_format(text), trace_format::native_text);
  EXPECT_EQ(detect_format(pickle), trace_format::pytorch_snapshot);
  EXPECT_EQ(read_trace(csv).allocs, 1u);
  EXPECT_EQ(read_trace(text).frees, 1u);
  // A well-formed snapshot that recorded nothing: read, and then refused as a trace without
  // events (EmptyFilesAndTracesWithoutEventsAreErrors).
  EXPECT_EQ(read_pytorch_snapshot(pickle).devices.size(), 0u);
}

TEST(ReadTrace, TextFilesMayStartWithAUtf8ByteOrderMark)
{
  std::string const bom = "\xEF\xBB\xBF";
  auto const csv = write("bom.csv", bom + std::string(header) + "\n1,00:00:00.000001,allocate,0x10,100,0\n");
  auto const text = write("bom.trace", bom + "a 1 100\nf 1\n");
  EXPECT_EQ(detect_format(csv), trace_format::rmm_csv);
  EXPECT_EQ(read_trace(csv).allocs, 1u);
  EXPECT_EQ(read_trace(text).frees, 1u);
  // Only in front of the first line.
  auto const later = write("bom_later.trace", "a 1 100\n" + bom + "f 1\n");
  EXPECT_THROW(read_trace(later), input_error);
}

TEST(ReadTrace, EmptyFilesAndTracesWithoutEventsAndSnapshotsWithoutTheirKeysAreErrors)
{
  auto error_of = [](std::string const& path) -> std::string {
    try {
      read_trace(path);
    } catch (input_error const& e) {
      return e.what();
    }
    return "no error";
  };
  auto const empty = write("empty.trace", "");
  EXPECT_EQ(error_of(empty), empty + ":1: empty file: expected a trace (native text, native binary, RMM CSV or a PyTorch snapshot)");
  // A directory, and a file of another binary format, which the text reader would quote.
  EXPECT_EQ(error_of(::testing::TempDir()), ::testing::TempDir() + ": a directory; expected a trace file");
  auto const binary = write("elf.bin", std::string("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 10));
  EXPECT_EQ(error_of(binary), binary + ": binary data, not a trace (native text, native binary, RMM CSV or a PyTorch snapshot); "
                                       "it starts '\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00'");
  // A header alone, comments alone, a snapshot that recorded nothing: no events to replay.
  std::string const no_events = ": no events: expected at least one allocation";
  auto const header_only = write("header_only.csv", std::string(header) + "\n");
  EXPECT_EQ(error_of(header_only), header_only + no_events);
  auto const comments = write("comments.trace", "# a capture that recorded nothing\n\n");
  EXPECT_EQ(error_of(comments), comments + no_events);
  // pickle.dumps({'segments': [], 'device_traces': []}, protocol=2)
  auto const nothing = write("nothing.pickle", std::string("\x80\x02}q\x00(X\x08\x00\x00\x00"
                                                           "segmentsq\x01]q\x02X\x0d\x00\x00\x00"
                                                           "device_tracesq\x03]q\x04u.",
                                                           49));
  EXPECT_EQ(error_of(nothing), nothing + no_events);
  // pickle.dumps({'segments': [{'address': 5}], 'device_traces': [[]]}, protocol=2)
  auto const no_size = write("no_size.pickle", std::string("\x80\x02\x7d\x71\x00\x28\x58\x08\x00\x00\x00" "segments" "\x71\x01"
                                                           "\x5d\x71\x02\x7d\x71\x03\x58\x07\x00\x00\x00" "address" "\x71\x04"
                                                           "\x4b\x05\x73\x61\x58\x0d\x00\x00\x00" "device_traces" "\x71\x05"
                                                           "\x5d\x71\x06\x5d\x71\x07\x61\x75\x2e",
                                                           74));
  EXPECT_NE(error_of(no_size).find("expected key '"), std::string::npos) << error_of(no_size);
  // pickle.dumps([1, 2], protocol=2): plain data, but not a snapshot.
  auto const list = write("list.pickle", std::string("\x80\x02\x5d\x71\x00\x28\x4b\x01\x4b\x02\x65\x2e", 12));
  EXPECT_NE(error_of(list).find("expected a dict at the top of a PyTorch memory snapshot"), std::string::npos) << error_of(list);
  // Found by fuzz_read_trace: an event of 0 bytes. PyTorch records none; a replay could not
  // serve one as an allocation. pickle.dumps({'segments': [], 'device_traces': [[{'action':
  // 'alloc', 'addr': 16, 'size': 0, 'stream': 0}]]}, protocol=2)
  std::string const hex =
      "80027d71002858080000007365676d656e747371015d7102580d0000006465766963655f74726163657371035d71045d71057d7106"
      "285806000000616374696f6e71075805000000616c6c6f63710858040000006164647271094b10580400000073697a65710a4b0058"
      "0600000073747265616d710b4b00756161752e";
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  auto const zero = write("zero.pickle", bytes);
  EXPECT_NE(error_of(zero).find("expected a positive 'size' in a 'alloc' event"), std::string::npos) << error_of(zero);
}

TEST(ReadTrace, SnapshotsBecomeTracesWithTheStartStateAllocatedFirst)
{
  pytorch_snapshot s;
  s.name = "s";
  device_snapshot d;
  d.initial_segments.push_back({0x1000, 2 << 20, 0, true, {{0x1000, 512, 100}, {0x1400, 1024, 1000}}});
  d.events = {{snapshot_op::free, 0x1000, 100, 0},
              {snapshot_op::segment_alloc, 0x900000, 2 << 20, 0},
              {snapshot_op::alloc, 0x900000, 64, 0},
              {snapshot_op::free, 0x900000, 64, 0}};
  s.devices.push_back(d);
  trace t = snapshot_traces(s).at(0);
  ASSERT_EQ(t.events.size(), 5u);  // two start allocations, then alloc/free events; no segment events
  EXPECT_EQ(t.events[0].size, 100u);
  EXPECT_EQ(t.events[1].size, 1000u);
  EXPECT_EQ(t.events[2].kind, op::free);
  EXPECT_EQ(t.events[2].slot, t.events[0].slot);
  EXPECT_EQ(t.allocs, 3u);
  EXPECT_EQ(t.frees, 2u);
}

// A run of segment_free events that gives back every cached segment without a live block is
// the program emptying the cache (a release event, replayed under any policy); a run that
// keeps one cached is the allocator's own choice, which a preset makes for itself.
TEST(ReadTrace, SnapshotReleasesAreTheRunsThatEmptyTheCache)
{
  constexpr std::uint64_t seg = 2 << 20, a = 0x200000, b = 0x400000, c = 0x600000;
  pytorch_snapshot s;
  s.name = "s";
  s.recorded_devices = 1;
  device_snapshot d;
  d.initial_segments.push_back({a, seg, 0, true, {{a, 512, 100}}});  // one live block
  d.initial_segments.push_back({b, seg, 0, true, {}});               // cached, idle
  d.events = {{snapshot_op::segment_free, b, seg, 0},   // b, the only idle segment: empty_cache
              {snapshot_op::segment_alloc, c, seg, 0},  // c idle
              {snapshot_op::free, a, 100, 0},           // a idle
              {snapshot_op::segment_free, a, seg, 0},   // a goes, c stays: the allocator's choice
              {snapshot_op::alloc, c, 64, 0},
              {snapshot_op::free, c, 64, 0},
              {snapshot_op::segment_free, c, seg, 0}};  // every idle segment: empty_cache
  s.devices.push_back(d);
  trace const t = snapshot_traces(s).at(0);
  std::vector<op> kinds;
  for (auto const& e : t.events) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<op>{op::alloc, op::release, op::free, op::alloc, op::free, op::release}));
  EXPECT_EQ(t.releases, 2u);
  EXPECT_EQ(t.allocs, 2u);
  EXPECT_EQ(t.frees, 2u);
}

// Each device has an allocator of its own in PyTorch: a snapshot of several is several traces.
TEST(ReadTrace, SnapshotsOfSeveralDevicesAreOneTracePerDevice)
{
  pytorch_snapshot s;
  s.name = "run.pickle";
  s.recorded_devices = 3;
  for (int dev : {0, 2}) {
    device_snapshot d;
    d.device = dev;
    d.initial_segments.push_back({0x200000, 2 << 20, 0, true, {{0x200000, 512, 100 + std::uint64_t(dev)}}});
    d.recorded_ooms = dev;
    s.devices.push_back(d);
  }
  auto const traces = snapshot_traces(s);
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[0].name, "run.pickle@cuda:0");
  EXPECT_EQ(traces[1].name, "run.pickle@cuda:2");
  EXPECT_EQ(traces[1].device, 2);
  EXPECT_EQ(traces[1].events.at(0).size, 102u);
  EXPECT_EQ(traces[1].recorded_failures, 2u);  // its `oom` entries
  s.recorded_devices = 1;
  s.devices.pop_back();
  EXPECT_EQ(snapshot_traces(s).at(0).name, "run.pickle");  // one device: the file's name
}

}  // namespace
}  // namespace fraglab::trace
