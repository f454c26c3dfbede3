// One pass over a trace's events, a batch at a time: a window onto the events held in
// memory, or the native binary decoder reading the file. Every consumer of events (replay,
// drive, info, the writers) goes through this, so each works on traces larger than memory.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace fraglab::trace {

class event_batches {
 public:
  // Large enough that the per-batch work (a clock read, a progress update, a refill)
  // vanishes against the events; small enough to stay in L2.
  static constexpr std::size_t batch_size = 1 << 14;

  virtual ~event_batches() = default;
  // The next events, empty at the end; valid until the next call. Throws input_error on a
  // malformed file.
  virtual std::span<event const> next() = 0;
};

// One pass over `t`: its events in memory, or its file decoded (defined in native_binary.cpp,
// beside the one format that streams, so that this window knows no format).
std::unique_ptr<event_batches> open_events(trace const& t);

// A pass over events held in memory, `events` kept alive by the caller.
std::unique_ptr<event_batches> memory_events(std::vector<event> const& events);

// Calls f(std::span<event const>) for each batch of one pass.
template <class F>
void for_each_batch(trace const& t, F&& f)
{
  auto batches = open_events(t);
  for (auto b = batches->next(); !b.empty(); b = batches->next()) f(b);
}

// Calls f(event const&) for each event of one pass.
template <class F>
void for_each_event(trace const& t, F&& f)
{
  for_each_batch(t, [&](std::span<event const> b) {
    for (event const& e : b) f(e);
  });
}

}  // namespace fraglab::trace
