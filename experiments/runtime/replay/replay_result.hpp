// One row of results: a trace replayed under one allocator. Metric definitions are in
// docs/metrics.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

class progress_meter;

// How the replay loop frees a block: by the reference its allocation returned, so that the
// engine looks no address up (as a malloc's free reads the header in front of the block), or
// by its address, as a program plugged in by pointer frees (the PyTorch plug-in); the engine
// then builds and keeps its address map (docs/performance.md, "Freeing by reference"). The
// decisions are the same either way; the time and the engine's memory are not.
enum class free_by : std::uint8_t { reference, address };

// The value of a command's --free-by option; throws std::invalid_argument saying what it takes.
inline free_by parse_free_by(std::string_view text)
{
  if (text == "reference") return free_by::reference;
  if (text == "address") return free_by::address;
  throw std::invalid_argument("--free-by: expected reference or address, got '" + std::string(text) + "'");
}

struct replay_options {
  bool strict = false;           // a free of an unknown id or a reused live id is fatal
  bool stop_on_failure = false;  // stop at the first allocation that cannot be served
  unsigned repeats = 1;          // timed runs; ns_per_op is their median (0: no timing)
  // Time the runs on the allocator of the metrics pass, kept warm (its records, address map
  // and regions already grown, as in a long-running program and in bench_allocators), not on
  // a fresh allocator each. The blocks a pass leaves live are freed outside the clock.
  bool warm = false;
  bool timeseries = false;       // keep replay_result::timeseries
  free_by frees = free_by::reference;
  progress_meter* progress = nullptr;  // told of every batch of events replayed, when set
  // When set, read after every batch of events: true cancels the replay, which throws
  // run_cancelled (Ctrl-C in the Python module, whose replays run with its lock released).
  std::atomic<bool> const* stop = nullptr;
};

struct run_cancelled : std::runtime_error {
  run_cancelled() : std::runtime_error("cancelled") {}
};

// Units of work a replay of `events` reports to replay_options::progress: one per event per
// pass.
inline std::uint64_t replay_work(std::uint64_t events, replay_options const& o) { return events * (1 + o.repeats); }

// The allocator's state at one sampled event, and the highest live and reserved bytes seen
// since the previous sample, so that sampling never hides a peak.
struct timeseries_sample {
  std::uint64_t event = 0;  // events replayed so far
  std::size_t live_bytes = 0;
  std::size_t allocated_bytes = 0;
  std::size_t reserved_bytes = 0;
  std::size_t largest_free_bytes = 0;
  std::size_t free_chunks = 0;
  std::size_t max_live_bytes = 0;
  std::size_t max_reserved_bytes = 0;
};

// A replay samples at most this many evenly spaced events (every ceil(events / N)-th, and
// the last): the time series, and the time-averaged external fragmentation, whose largest
// free chunk would otherwise cost an index query per event.
inline constexpr std::uint64_t timeseries_points = 4096;

struct replay_result {
  std::string trace;
  std::string policy;
  std::string backend;           // the backend it ran on
  std::size_t granularity = 0;   // the bytes every acquisition rounds up to
  std::string parameters;        // KEY=VALUE ... as it ran (composition::parameters)
  std::uint64_t events = 0;
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
  std::uint64_t failed_allocs = 0;
  std::uint64_t unknown_frees = 0;     // frees of ids not live (never allocated, or freed already)
  std::uint64_t duplicate_allocs = 0;  // allocations under an id that is still live (skipped)
  std::size_t peak_live_bytes = 0;
  std::size_t peak_allocated_bytes = 0;
  std::size_t peak_reserved_bytes = 0;
  double frag1 = 0;  // time-average of reserved/live - 1
  double frag2 = 0;  // reserved/live - 1 when live peaks
  double frag3 = 0;  // reserved/live - 1 when reserved peaks
  double frag4 = 0;  // peak reserved / peak live - 1
  double ext_frag_at_peak = 0;  // TF's (free - largest free) / free when reserved peaks
  double ext_frag_avg = 0;      // the same, averaged over the sampled events
  std::size_t free_chunks_at_peak = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t releases = 0;
  std::uint64_t cache_releases = 0;  // the trace's op::release events applied (empty_cache)
  std::uint64_t splits = 0;  // chunks the metrics pass cut in two
  std::uint64_t merges = 0;  // and joined to a free neighbour
  double index_steps_per_op = 0;
  double ns_per_op = 0;
  std::vector<timeseries_sample> timeseries;  // when replay_options::timeseries

  // GMLake's memory utilization: peak allocated / peak reserved (0 when nothing was reserved).
  [[nodiscard]] double utilization() const noexcept
  {
    return peak_reserved_bytes == 0 ? 0.0 : static_cast<double>(peak_allocated_bytes) / static_cast<double>(peak_reserved_bytes);
  }
};

}  // namespace fraglab
