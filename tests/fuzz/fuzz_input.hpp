// Shared by the libFuzzer targets: an in-memory file for readers that take a path, and the
// rule every reader target enforces.
//
// The rule: a reader either returns a trace whose events are consistent with its counts, or
// throws input_error. Any other exception, a crash, a sanitizer report or a leak is a bug.
#pragma once

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace fraglab::fuzz {

// The bytes as a file without touching the disk: /proc/self/fd/N of a memfd.
class memory_file {
 public:
  memory_file(std::uint8_t const* data, std::size_t size) : fd_(::memfd_create("fraglab-fuzz", 0))
  {
    if (fd_ < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
      ssize_t const n = ::write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  memory_file(memory_file const&) = delete;
  memory_file& operator=(memory_file const&) = delete;
  ~memory_file() { ::close(fd_); }

  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

[[noreturn]] inline void bug(char const* what)
{
  std::fprintf(stderr, "fraglab fuzz: %s\n", what);
  std::abort();
}

// Every event of one pass must agree with the trace's header counts and slot range.
inline void check_events(trace::trace const& t)
{
  std::uint64_t events = 0, allocs = 0, releases = 0;
  trace::for_each_event(t, [&](trace::event const& e) {
    ++events;
    if (e.slot >= t.slots) bug("an event's slot is out of range");
    if (e.kind == trace::op::alloc) {
      ++allocs;
      if (e.size == 0) bug("an allocation of 0 bytes was accepted");
      if (e.alignment == 0 || (e.alignment & (e.alignment - 1)) != 0) bug("a bad alignment was accepted");
    } else if (e.kind == trace::op::release) {
      ++releases;
    }
  });
  if (events != t.event_count() || allocs != t.allocs || releases != t.releases || events - allocs - releases != t.frees)
    bug("the events disagree with the trace's counts");
}

// The whole of a target for a reader that takes a stream: `read(std::istream&)` returns a
// trace or throws input_error.
template <class Read>
int check_stream_reader(std::uint8_t const* data, std::size_t size, Read read)
{
  std::istringstream in(std::string(reinterpret_cast<char const*>(data), size));
  try {
    check_events(read(in));
  } catch (input_error const&) {
  }
  return 0;
}

}  // namespace fraglab::fuzz
