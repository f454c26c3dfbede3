// The replay loop, instantiated once per concrete allocator type so that the hot loop has
// no virtual call; a timed pass also inlines the allocator's allocate and deallocate into
// it, as a program compiled with a policy would. A metrics pass observes every decision;
// timed passes (the median of `repeats`) run the same loop without observation, and time
// only the allocator's work: the clock is read around each batch of events, never around
// the decoding of a file. Each timed pass starts from a fresh allocator, so it pays for
// growing the allocator's records, address map and regions and for their first page
// faults, as a program's run does; with `warm` they all reuse the metrics pass's
// allocator, as a long-running program and bench_allocators do (over the host backend
// tf_bfc on perl measured 30% less warm; docs/metrics.md).
#pragma once

#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/engine/stats.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <stdexcept>
#include <vector>

namespace fraglab {
namespace detail {

// What the metrics pass accumulates besides the allocator's own counters.
struct metrics_observer {
  double ratio_sum = 0;
  std::uint64_t ratio_samples = 0;
  std::size_t peak_live = 0, peak_reserved = 0, reserved_at_peak_live = 0, live_at_peak_reserved = 0;
  std::uint64_t observation_steps = 0;  // index steps spent measuring, not deciding

  // Sampling on an even grid of events (replay_result.hpp: timeseries_points).
  std::uint64_t stride = 1, next_sample = 1, last_sampled = 0;
  double ext_sum = 0;
  std::uint64_t ext_samples = 0;
  std::size_t interval_max_live = 0, interval_max_reserved = 0;
  std::vector<timeseries_sample>* series = nullptr;

  explicit metrics_observer(std::uint64_t events, std::vector<timeseries_sample>* keep)
      : stride(std::max<std::uint64_t>(1, (events + timeseries_points - 1) / timeseries_points)), next_sample(stride),
        series(keep)
  {
  }

  static double ratio(std::size_t reserved, std::size_t live)
  {
    return live == 0 ? 0.0 : static_cast<double>(reserved) / static_cast<double>(live) - 1.0;
  }

  static double external(std::size_t free_bytes, std::size_t largest)
  {
    return free_bytes == 0 ? 0.0 : static_cast<double>(free_bytes - largest) / static_cast<double>(free_bytes);
  }

  template <class Alloc>
  std::size_t largest_free(Alloc const& a)
  {
    std::uint64_t const before = a.index_steps();
    std::size_t const largest = a.largest_free_bytes();
    observation_steps += a.index_steps() - before;
    return largest;
  }

  template <class Alloc>
  void after_event(Alloc const& a, std::uint64_t processed, replay_result& r)
  {
    auto const& c = a.counters();
    if (c.live_bytes > 0) {
      ratio_sum += ratio(c.reserved_bytes, c.live_bytes);
      ++ratio_samples;
    }
    if (c.live_bytes > peak_live) {
      peak_live = c.live_bytes;
      reserved_at_peak_live = c.reserved_bytes;
    }
    if (c.reserved_bytes > peak_reserved) {
      peak_reserved = c.reserved_bytes;
      live_at_peak_reserved = c.live_bytes;
      r.ext_frag_at_peak = external(c.reserved_bytes - c.allocated_bytes, largest_free(a));
      r.free_chunks_at_peak = a.free_chunk_count();
    }
    interval_max_live = std::max(interval_max_live, c.live_bytes);
    interval_max_reserved = std::max(interval_max_reserved, c.reserved_bytes);
    if (processed >= next_sample) {  // past it too: a restored start skips events
      sample(a, processed);
      next_sample = (processed / stride + 1) * stride;
    }
  }

  template <class Alloc>
  void sample(Alloc const& a, std::uint64_t processed)
  {
    auto const& c = a.counters();
    std::size_t const largest = largest_free(a);
    if (c.reserved_bytes > 0) {
      ext_sum += external(c.reserved_bytes - c.allocated_bytes, largest);
      ++ext_samples;
    }
    if (series != nullptr)
      series->push_back({processed, c.live_bytes, c.allocated_bytes, c.reserved_bytes, largest, a.free_chunk_count(),
                         interval_max_live, interval_max_reserved});
    interval_max_live = c.live_bytes;
    interval_max_reserved = c.reserved_bytes;
    last_sampled = processed;
  }
};

enum class slot_state : std::uint8_t { empty, live, failed };

// One record per trace slot: its block (address, and the allocator's record of it where it
// keeps one) and whether it is live.
struct slot {
  block_ref block;
  slot_state state = slot_state::empty;
};

// Frees a slot's block: by reference where the allocator takes one, so that the engine
// looks no address up, as a malloc's free reads the header in front of the block
// (docs/performance.md, "Freeing by reference"); by address where it does not, or where the slot
// keeps no record (free_by::address).
template <class Alloc>
void free_block(Alloc& a, slot const& s)
{
  if constexpr (requires { a.deallocate(block_ref{}); }) {
    a.deallocate(s.block);
  } else {
    a.deallocate(s.block.address);
  }
}

// A strict replay's refusal of event `processed`: out of line, so that the loop that inlines
// the allocator does not carry the message's formatting.
[[noreturn]] FRAGLAB_COLD inline void refuse_event(trace::trace const& t, std::uint64_t processed, char const* why)
{
  throw input_error(t.name + ": event " + std::to_string(processed) + ": " + why);
}

// Calls f(arg) with everything f calls inlined into it: a timed pass's loop then holds the
// allocator's allocate and deallocate, not calls to them, as a program compiled with a
// policy does (docs/performance.md, "Hot and cold paths").
template <class F, class Arg>
FRAGLAB_HOT void inlined_call(F& f, Arg arg)
{
  f(arg);
}

// A trace's op::release (the program emptied the allocator's cache): every wholly free
// region goes back, where the allocator can give regions back.
template <class Alloc>
FRAGLAB_COLD void release_cache(Alloc& a)
{
  if constexpr (requires { a.release_free_regions(); }) (void)a.release_free_regions();
}

struct pass_totals {
  std::uint64_t processed = 0;
  std::uint64_t failed = 0;  // allocations the allocator could not serve
  double allocator_ns = 0;   // time spent in the batches' loops, the untimed prefix excluded
};

// Restores a trace's start segments (trace.hpp) into a fresh allocator whose pool rule names
// pools as PyTorch's does, by stream and pool size, and is not expandable: each segment from
// the backend, its blocks live where the recording had them, their slots live. Returns the
// events that this stands for, or 0 (replay them: another policy, or a start this backend
// cannot hold).
// An allocator whose pool rule names pools as PyTorch's does, over a backend it acquires
// from. The type's presence is tested first: a layer without a policy_type (gmlake) is no
// such allocator, and naming its missing member in a parameter list is a hard error.
template <class Alloc>
concept pytorch_pools = requires { typename Alloc::policy_type::pools; } &&
                        requires(Alloc& a, typename Alloc::policy_type::pools p) {
                          p.key(std::uint64_t{}, true);
                          a.backend().acquire(1, 1);
                        };

template <class Alloc>
std::uint64_t restore_start(Alloc& a, trace::trace const& t, std::vector<slot>& slots)
{
  // Blocks of private pools replayed in the default pools would share segments that PyTorch
  // keeps apart: every number would be another allocator's.
  if (!t.private_pools.empty())
    throw std::invalid_argument(t.name + ": has segments of private pools (segment_pool_id " + t.private_pools.front() +
                                (t.private_pools.size() > 1 ? ", ..." : "") +
                                "), which PyTorch keeps apart from the default pools and no policy models yet");
  if constexpr (!pytorch_pools<Alloc>) {
    return 0;
  } else {
    using pools = typename Alloc::policy_type::pools;
    if constexpr (requires { a.configuration().pools.expandable_segments; })
      if (a.configuration().pools.expandable_segments) return 0;
    // The allocator that made the recording gets its segments where it got them then: the
    // start's, then those it obtained (when the start is restored, or there is none).
    auto const follow_recording = [&] {
      if constexpr (backend_traits<typename Alloc::backend_type>::follow)
        a.backend().follow(t.recorded_segments);
    };
    if (t.start_segments.empty()) {
      follow_recording();
      return 0;
    }
    std::size_t const g = a.granule();
    std::uint64_t total = 0;
    for (auto const& seg : t.start_segments) {
      if (seg.size == 0 || seg.size % g != 0 || __builtin_add_overflow(total, seg.size, &total)) return 0;
      std::uint64_t cursor = 0;
      for (auto const& b : seg.live) {
        if (b.offset < cursor || b.offset % g != 0 || b.size % g != 0 || b.size == 0 || b.requested == 0 ||
            b.requested > b.size || b.size > seg.size - b.offset || b.slot >= t.slots)
          return 0;
        cursor = b.offset + b.size;
      }
    }
    if (total > a.backend().capacity() - std::min(a.backend().capacity(), a.backend().acquired_bytes())) return 0;
    follow_recording();
    slots.resize(t.slots);
    std::vector<typename Alloc::restored_block> blocks;
    for (auto const& seg : t.start_segments) {
      auto const got = a.backend().acquire(seg.size, g);
      if (!got || got.size != seg.size) throw std::runtime_error(t.name + ": the backend refused a segment of the start state");
      blocks.clear();
      for (auto const& b : seg.live) blocks.push_back({got.base + b.offset, b.size, b.requested, seg.stream});
      a.restore_region(got, pools::key(seg.stream, seg.small), blocks);
      for (auto const& b : seg.live) slots[b.slot] = {block_ref{got.base + b.offset, nullptr}, slot_state::live};
    }
    return t.start_events;
  }
}

// One pass over the trace with the slots of a previous pass (all empty, or sized afresh).
// With Observe, `f` watches every event and `r` gets the anomaly counts; without, the loop
// is the allocator's work alone. The first `untimed_prefix` events run outside the clock:
// a benchmark's set-up (building up live blocks) through the same loop as its measurement.
// The first `restored_prefix` events are skipped: restore_start stood for them.
template <bool Observe, class Alloc>
pass_totals run_pass(Alloc& a, trace::trace const& t, replay_options const& o, replay_result& r, metrics_observer* f,
                     std::vector<slot>& slots, std::uint64_t untimed_prefix = 0, std::uint64_t restored_prefix = 0)
{
  slots.resize(t.slots);
  pass_totals totals;
  std::uint64_t processed = 0;
  bool stopped = false;
  auto apply = [&](std::span<trace::event const> events) {
    // A slot without a record is freed by its address. A mask rather than a choice, and a
    // local of the batch: one instruction an allocation (a choice took three; a copy outside
    // the lambda is read through a reference, which every store to a slot's byte-sized state
    // may alias, so it was loaded again at every allocation). The event count is a local of
    // the batch for the same reason, and a stop on failure leaves the loop where it happens
    // rather than each event testing a flag (docs/performance.md, "Hot and cold paths").
    std::uintptr_t const record_mask = o.frees == free_by::reference ? ~std::uintptr_t{0} : 0;
    std::uint64_t n = processed;
    for (trace::event const& e : events) {
      ++n;
      slot& s = slots[e.slot];
      if (e.kind == trace::op::alloc) {
        if (s.state == slot_state::live) {
          if (o.strict) refuse_event(t, n, "allocation under an id that is still live");
          if constexpr (Observe) ++r.duplicate_allocs;
        } else if (allocation const got = a.allocate(e.size, e.alignment, e.stream); got) {
          s = {{got.address, reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(got.record) & record_mask)}, slot_state::live};
        } else {
          s.state = slot_state::failed;
          ++totals.failed;
          if (o.stop_on_failure) [[unlikely]] {
            if constexpr (Observe) f->after_event(a, n, r);
            stopped = true;
            break;
          }
        }
      } else if (s.state == slot_state::empty) {
        // A release names a slot that is never live (trace.hpp), so that only this cold
        // branch tells it from a free.
        if (e.kind == trace::op::release) {
          release_cache(a);
          if constexpr (Observe) ++r.cache_releases;
        } else {
          if (o.strict) refuse_event(t, n, "free of an id that is not live");
          if constexpr (Observe) ++r.unknown_frees;
        }
      } else {
        if (s.state == slot_state::live) free_block(a, s);
        s.state = slot_state::empty;
      }
      if constexpr (Observe) f->after_event(a, n, r);
    }
    processed = n;
  };
  auto batches = trace::open_events(t);
  for (auto whole = batches->next(); !whole.empty() && !stopped; whole = batches->next()) {
    std::span<trace::event const> batch = whole;
    if (processed < restored_prefix) {
      std::size_t const skipped = std::min<std::uint64_t>(batch.size(), restored_prefix - processed);
      processed += skipped;
      batch = batch.subspan(skipped);
    }
    std::size_t const untimed = processed >= untimed_prefix ? 0 : std::min<std::uint64_t>(batch.size(), untimed_prefix - processed);
    if (untimed > 0) apply(batch.first(untimed));
    if (untimed < batch.size() && !stopped) {
      if constexpr (Observe) {
        apply(batch.subspan(untimed));
      } else {
        auto const start = std::chrono::steady_clock::now();
        inlined_call(apply, batch.subspan(untimed));
        totals.allocator_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      }
    }
    if (o.progress != nullptr) o.progress->add(whole.size());
    if (o.stop != nullptr && o.stop->load(std::memory_order_relaxed)) throw run_cancelled();
  }
  if constexpr (Observe) {
    r.failed_allocs += totals.failed;
    if (f->last_sampled != processed && processed > 0) f->sample(a, processed);
  }
  totals.processed = processed;
  return totals;
}

// Frees the blocks a pass left live and empties every slot, so that the next pass can run on
// the same allocator; returns how many it freed.
template <class Alloc>
std::uint64_t free_leftovers(Alloc& a, std::vector<slot>& slots)
{
  std::uint64_t freed = 0;
  for (slot& s : slots) {
    if (s.state == slot_state::live) {
      free_block(a, s);
      ++freed;
    }
    s = {};
  }
  return freed;
}

}  // namespace detail

// `make` returns a std::unique_ptr to a fresh allocator; it is called once per pass, or once
// in all with `o.warm`.
template <class MakeAllocator>
replay_result replay_trace(MakeAllocator&& make, trace::trace const& t, replay_options const& o)
{
  replay_result r;
  r.trace = t.name;
  detail::metrics_observer f(t.event_count(), o.timeseries ? &r.timeseries : nullptr);
  decltype(make()) warm;  // the metrics pass's allocator, when the timed passes reuse it
  std::vector<detail::slot> slots;
  {
    auto a = make();
    std::uint64_t const restored = detail::restore_start(*a, t, slots);
    r.events = detail::run_pass<true>(*a, t, o, r, &f, slots, 0, restored).processed;
    auto const& c = a->counters();
    r.allocs = c.allocations + restored;  // the start's blocks count as the allocations they stand for
    r.frees = c.deallocations;
    r.peak_live_bytes = c.peak_live_bytes;
    r.peak_allocated_bytes = c.peak_allocated_bytes;
    r.peak_reserved_bytes = c.peak_reserved_bytes;
    r.acquisitions = c.acquisitions;
    r.releases = c.releases;
    std::uint64_t const decision_steps = a->index_steps() - f.observation_steps;
    r.index_steps_per_op = r.events == 0 ? 0.0 : static_cast<double>(decision_steps) / static_cast<double>(r.events);
    // Splits and merges are derived, not counted. After the steps are read: stats() also seeks
    // the largest free chunk, whose steps are the replay's measuring, not the policy's.
    allocator_stats const whole = a->stats();
    r.splits = whole.splits;
    r.merges = whole.merges;
    if (o.warm && o.repeats > 0) {
      (void)detail::free_leftovers(*a, slots);
      warm = std::move(a);
    }
  }
  r.frag1 = f.ratio_samples == 0 ? 0.0 : f.ratio_sum / static_cast<double>(f.ratio_samples);
  r.frag2 = detail::metrics_observer::ratio(f.reserved_at_peak_live, f.peak_live);
  r.frag3 = detail::metrics_observer::ratio(f.peak_reserved, f.live_at_peak_reserved);
  r.frag4 = detail::metrics_observer::ratio(r.peak_reserved_bytes, r.peak_live_bytes);
  r.ext_frag_avg = f.ext_samples == 0 ? 0.0 : f.ext_sum / static_cast<double>(f.ext_samples);

  std::vector<double> ns;
  for (unsigned i = 0; i < o.repeats; ++i) {
    replay_result scratch;
    detail::pass_totals pass;
    if (warm) {
      // A warm allocator holds the regions of the passes before: the start is replayed as
      // allocations into them.
      pass = detail::run_pass<false>(*warm, t, o, scratch, nullptr, slots);
      (void)detail::free_leftovers(*warm, slots);
    } else {
      auto a = make();
      slots.assign(slots.size(), detail::slot{});
      std::uint64_t const restored = detail::restore_start(*a, t, slots);
      pass = detail::run_pass<false>(*a, t, o, scratch, nullptr, slots, 0, restored);
    }
    ns.push_back(pass.processed == 0 ? 0.0 : pass.allocator_ns / static_cast<double>(pass.processed));
  }
  if (!ns.empty()) {
    std::sort(ns.begin(), ns.end());
    r.ns_per_op = ns[ns.size() / 2];
  }
  return r;
}

}  // namespace fraglab
