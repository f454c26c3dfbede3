// Replay semantics and metrics on traces whose numbers are worked out by hand.
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/replay/pass_runner_of.hpp>
#include <fraglab/runtime/replay/replay.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include "support/fixtures.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <vector>

namespace fraglab {
namespace {

trace::trace parse(std::string const& text)
{
  std::istringstream in(text);
  return trace::read_native_text(in, "hand.trace");
}

replay_result run(std::string const& spec, std::string const& text, backend_choice b = {"simulated"},
                  replay_options o = {}, param_set p = {})
{
  return make_composition(spec, p, b)->replay(parse(text), o);
}

TEST(Replay, JohnstoneWilsonFragmentationOnAHandTrace)
{
  // quantum 16, simulated backend (granularity 256), exact growth, no merging:
  //   a1 100 -> region 256 (chunk 112); live 100, reserved 256, ratio 1.56
  //   a2 200 -> 144 left, 208 needed: region 256; live 300, reserved 512, ratio 0.7067
  //   f1     -> live 200, reserved 512, ratio 1.56
  //   a3 50  -> fits in the first region; live 250, reserved 512, ratio 1.048
  //   f2     -> live 50, reserved 512, ratio 9.24
  //   f3     -> live 0: not sampled
  auto r = run("tree_best", "a 1 100\na 2 200\nf 1\na 3 50\nf 2\nf 3\n");
  EXPECT_EQ(r.events, 6u);
  EXPECT_EQ(r.allocs, 3u);
  EXPECT_EQ(r.frees, 3u);
  EXPECT_EQ(r.peak_live_bytes, 300u);
  EXPECT_EQ(r.peak_allocated_bytes, 112u + 208u);
  EXPECT_EQ(r.peak_reserved_bytes, 512u);
  EXPECT_NEAR(r.frag1, (256.0 / 100 + 512.0 / 300 + 512.0 / 200 + 512.0 / 250 + 512.0 / 50) / 5 - 1, 1e-12);
  EXPECT_NEAR(r.frag2, 512.0 / 300 - 1, 1e-12);  // at peak live
  EXPECT_NEAR(r.frag3, 512.0 / 300 - 1, 1e-12);  // reserved peaked at the same event
  EXPECT_NEAR(r.frag4, 512.0 / 300 - 1, 1e-12);
  // At peak reserved: free = 512 - 320 = 192 in two chunks, 144 and 48: (192 - 144) / 192.
  EXPECT_NEAR(r.ext_frag_at_peak, 48.0 / 192.0, 1e-12);
  EXPECT_EQ(r.free_chunks_at_peak, 2u);
  EXPECT_EQ(r.acquisitions, 2u);
  // Cut: 112 from the first region, 208 from the second, 64 from the 256 that f1 made.
  // Joined: f1's 112 to 144, f2's 208 to 48, f3's 64 to 192.
  EXPECT_EQ(r.splits, 3u);
  EXPECT_EQ(r.merges, 3u);
}

// index_steps_per_op counts the steps the policy's decisions took, and none of the scans the
// replay makes to measure: over a list, the largest free chunk is a scan of every free chunk.
TEST(Replay, IndexStepsCountTheDecisionsAlone)
{
  std::string const text = "a 1 100\na 2 100\na 3 100\na 4 100\nf 1\nf 3\n";
  auto r = run("list_ao_first", text);
  auto a = make_composition("list_ao_first", {}, {"simulated"})->make();
  std::vector<allocation> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(a->allocate(100));
  a->deallocate(blocks[0].address);
  a->deallocate(blocks[2].address);
  allocator_stats const s = a->stats();  // index_steps is read before the largest free chunk is sought
  // Two 256-byte regions of two 112-byte blocks each: blocks 1 and 3 and both regions' 32-byte
  // tails are free, and a scan for the largest would count 4 steps.
  ASSERT_EQ(s.free_chunks, 4u);
  ASSERT_GT(s.index_steps, 0u);
  EXPECT_EQ(r.events, 6u);
  EXPECT_EQ(r.index_steps_per_op, static_cast<double>(s.index_steps) / 6.0);
}

TEST(Replay, TimeAveragedExternalFragmentationAndTheTimeSeriesOnTheHandTrace)
{
  // The trace above, event by event (free = reserved - allocated; TF's (free - largest) / free):
  //   a1: free 144 in one chunk                        -> 0
  //   a2: free 144 + 48                                -> 48 / 192
  //   f1: 112 merges with 144: free 256 + 48           -> 48 / 304
  //   a3: 64 from the 256: free 192 + 48               -> 48 / 240
  //   f2: 208 merges with 48: free 192 + 256           -> 192 / 448
  //   f3: 64 merges with 192: free 256 + 256           -> 256 / 512
  // Fewer than 4096 events: every event is a sample.
  replay_options o;
  o.timeseries = true;
  auto r = run("tree_best", "a 1 100\na 2 200\nf 1\na 3 50\nf 2\nf 3\n", {"simulated"}, o);
  EXPECT_NEAR(r.ext_frag_avg, (0 + 48.0 / 192 + 48.0 / 304 + 48.0 / 240 + 192.0 / 448 + 256.0 / 512) / 6, 1e-12);
  ASSERT_EQ(r.timeseries.size(), 6u);
  std::vector<std::size_t> const live{100, 300, 200, 250, 50, 0}, allocated{112, 320, 208, 272, 64, 0},
      reserved{256, 512, 512, 512, 512, 512}, largest{144, 144, 256, 192, 256, 256}, chunks{1, 2, 2, 2, 2, 2},
      max_live{100, 300, 300, 250, 250, 50};
  for (std::size_t i = 0; i < 6; ++i) {
    timeseries_sample const& s = r.timeseries[i];
    EXPECT_EQ(s.event, i + 1);
    EXPECT_EQ(s.live_bytes, live[i]) << i;
    EXPECT_EQ(s.allocated_bytes, allocated[i]) << i;
    EXPECT_EQ(s.reserved_bytes, reserved[i]) << i;
    EXPECT_EQ(s.largest_free_bytes, largest[i]) << i;
    EXPECT_EQ(s.free_chunks, chunks[i]) << i;
    EXPECT_EQ(s.max_live_bytes, max_live[i]) << i;  // over [previous sample, this one]
  }
  // Without the option, nothing is kept.
  EXPECT_TRUE(run("tree_best", "a 1 100\nf 1\n").timeseries.empty());
}

TEST(Replay, SamplingALongTraceNeverHidesAPeak)
{
  // 20000 events: a sample every 5th event; peaks fall between samples.
  std::string text;
  for (int i = 0; i < 10000; ++i) {
    text += "a " + std::to_string(i) + " " + std::to_string(16 + (i * 7919) % 20000) + "\n";
    if (i % 3 != 0) text += "f " + std::to_string(i) + "\n";
    else if (i >= 30) text += "f " + std::to_string(i - 30) + "\n";
  }
  replay_options o;
  o.timeseries = true;
  auto r = run("tf_bfc", text, {"simulated"}, o);
  ASSERT_GT(r.events, 2 * timeseries_points);
  std::uint64_t const stride = (r.events + timeseries_points - 1) / timeseries_points;
  EXPECT_EQ(r.timeseries.size(), (r.events + stride - 1) / stride);
  EXPECT_EQ(r.timeseries.back().event, r.events);
  std::size_t max_live = 0, max_reserved = 0;
  for (std::size_t i = 0; i < r.timeseries.size(); ++i) {
    auto const& s = r.timeseries[i];
    if (i + 1 < r.timeseries.size()) {
      EXPECT_EQ(s.event, (i + 1) * stride);
    }
    EXPECT_GE(s.max_live_bytes, s.live_bytes);
    EXPECT_GE(s.max_reserved_bytes, s.reserved_bytes);
    EXPECT_LE(s.largest_free_bytes, s.reserved_bytes - s.allocated_bytes);
    max_live = std::max(max_live, s.max_live_bytes);
    max_reserved = std::max(max_reserved, s.max_reserved_bytes);
  }
  EXPECT_EQ(max_live, r.peak_live_bytes);
  EXPECT_EQ(max_reserved, r.peak_reserved_bytes);
}

TEST(Replay, UnknownFreesAndLiveIdReuseAreCountedOrFatalWhenStrict)
{
  std::string const text = "a 1 64\nf 9\na 1 64\nf 1\nf 1\n";
  auto r = run("tree_best", text);
  EXPECT_EQ(r.unknown_frees, 2u);     // id 9 never allocated; id 1 freed twice
  EXPECT_EQ(r.duplicate_allocs, 1u);  // id 1 allocated while live
  EXPECT_EQ(r.allocs, 1u);
  replay_options strict;
  strict.strict = true;
  auto refusal = [&](std::string const& t) -> std::string {
    try {
      run("tree_best", t, {"simulated"}, strict);
    } catch (input_error const& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(refusal(text), "hand.trace: event 2: free of an id that is not live");
  EXPECT_EQ(refusal("a 1 64\na 2 64\na 1 64\n"), "hand.trace: event 3: allocation under an id that is still live");
}

TEST(Replay, CapacityFailuresAreCountedAndTheirFreesIgnored)
{
  // 600 bytes round to 608 and take a 768-byte region; a second region would pass 1024.
  std::string const text = "a 1 600\na 2 600\nf 2\nf 1\na 4 600\n";
  auto r = run("tree_best", text, {"simulated", 1024});
  EXPECT_EQ(r.failed_allocs, 1u);
  EXPECT_EQ(r.unknown_frees, 0u);  // f 2 belongs to the failed allocation: ignored quietly
  EXPECT_EQ(r.allocs, 2u);
  replay_options stop;
  stop.stop_on_failure = true;
  auto s = run("tree_best", text, {"simulated", 1024}, stop);
  EXPECT_EQ(s.events, 2u);
}

TEST(Replay, MetricsAreIdenticalFromRunToRun)
{
  std::string text;
  for (int i = 0; i < 500; ++i) text += "a " + std::to_string(i) + " " + std::to_string(16 + (i * 37) % 3000) + "\n";
  for (int i = 0; i < 500; i += 2) text += "f " + std::to_string(i) + "\n";
  for (int i = 500; i < 800; ++i) text += "a " + std::to_string(i) + " " + std::to_string(16 + (i * 91) % 5000) + "\n";
  auto a = run("ao_next", text, {"heap"});
  auto b = run("ao_next", text, {"heap"});
  EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes);
  EXPECT_EQ(a.frag1, b.frag1);
  EXPECT_EQ(a.ext_frag_at_peak, b.ext_frag_at_peak);
  EXPECT_EQ(a.index_steps_per_op, b.index_steps_per_op);
}

// Counts the allocators a replay makes and records, as it destroys each, what it had done.
class watched_allocators {
 public:
  using alloc = testing::alloc_t<policy<tree_index, best_fit>>;
  struct ended {
    std::uint64_t allocations, deallocations;
    std::size_t live_bytes;
  };

  // A `make` for replay_trace.
  auto maker()
  {
    return [this] {
      ++made;
      return std::unique_ptr<alloc, record_end>(new alloc(simulated_backend{}, alloc::config{}), record_end{this});
    };
  }

  int made = 0;
  std::vector<ended> ends;

 private:
  struct record_end {
    watched_allocators* seen;
    void operator()(alloc* a) const
    {
      auto const& c = a->counters();
      seen->ends.push_back({c.allocations, c.deallocations, c.live_bytes});
      delete a;
    }
  };
};

TEST(Replay, WarmTimingReusesTheMetricsPassAllocatorAndFreesWhatEachPassLeftLive)
{
  // Three allocations and one free: 200 + 50 bytes are still live at the end of each pass.
  trace::trace const t = parse("a 1 100\na 2 200\nf 1\na 3 50\n");
  auto replay_with = [&](bool warm, unsigned repeats, watched_allocators& seen) {
    replay_options o;
    o.repeats = repeats;
    o.warm = warm;
    return replay_trace(seen.maker(), t, o);
  };

  watched_allocators fresh;
  replay_result const f = replay_with(false, 3, fresh);
  ASSERT_EQ(fresh.made, 4);  // the metrics pass and each timed pass
  for (auto const& e : fresh.ends) {
    EXPECT_EQ(e.allocations, 3u);
    EXPECT_EQ(e.deallocations, 1u);
    EXPECT_EQ(e.live_bytes, 250u);
  }

  watched_allocators warm;
  replay_result const w = replay_with(true, 3, warm);
  ASSERT_EQ(warm.made, 1);
  ASSERT_EQ(warm.ends.size(), 1u);
  EXPECT_EQ(warm.ends[0].allocations, 4 * 3u);    // four passes on one allocator
  EXPECT_EQ(warm.ends[0].deallocations, 4 * 3u);  // the trace's free and both leftovers, each pass
  EXPECT_EQ(warm.ends[0].live_bytes, 0u);

  // The metrics come from the first pass either way.
  EXPECT_EQ(w.events, f.events);
  EXPECT_EQ(w.allocs, 3u);
  EXPECT_EQ(w.frees, 1u);
  EXPECT_EQ(w.peak_live_bytes, f.peak_live_bytes);
  EXPECT_EQ(w.peak_reserved_bytes, f.peak_reserved_bytes);
  EXPECT_EQ(w.frag1, f.frag1);
  EXPECT_EQ(w.index_steps_per_op, f.index_steps_per_op);

  // With no timed run there is nothing to keep warm.
  watched_allocators untimed;
  (void)replay_with(true, 0, untimed);
  ASSERT_EQ(untimed.ends.size(), 1u);
  EXPECT_EQ(untimed.ends[0].live_bytes, 250u);
}

// The engine's allocator, counting the frees that name a record and those that give an
// address alone.
class free_counting_allocator {
 public:
  using alloc = testing::alloc_t<policy<tree_index, best_fit>>;

  allocation allocate(std::size_t size, std::size_t alignment, stream_id stream)
  {
    return inner_.allocate(size, alignment, stream);
  }
  free_status deallocate(block_ref b)
  {
    ++(b.record != nullptr ? by_reference : by_address);
    return inner_.deallocate(b);
  }
  free_status deallocate(std::uintptr_t address)
  {
    ++by_address;
    return inner_.deallocate(address);
  }

  std::uint64_t by_reference = 0, by_address = 0;

 private:
  alloc inner_{simulated_backend{}, alloc::config{}};
};

TEST(Replay, BenchmarkPassesFreeByReferenceOrByAddressAsAsked)
{
  // Two frees in the trace and two blocks left live, freed after each pass.
  trace::trace const t = parse("a 1 100\na 2 200\nf 1\na 3 50\nf 2\na 4 70\n");
  for (free_by const frees : {free_by::reference, free_by::address}) {
    auto a = std::make_unique<free_counting_allocator>();
    free_counting_allocator const& seen = *a;
    auto runner = make_pass_runner(std::move(a), t, frees);
    for (int pass = 1; pass <= 2; ++pass) {
      pass_timing const p = runner->run();
      EXPECT_EQ(p.leftover_frees, 2u);
      std::uint64_t const freed = 4u * static_cast<std::uint64_t>(pass);
      EXPECT_EQ(seen.by_reference, frees == free_by::reference ? freed : 0u);
      EXPECT_EQ(seen.by_address, frees == free_by::address ? freed : 0u);
    }
  }
}

TEST(Replay, FreeingByAddressDecidesAsFreeingByReference)
{
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += "a " + std::to_string(i) + " " + std::to_string(16 + (i * 37) % 3000) + "\n";
    if (i % 3 == 2) text += "f " + std::to_string(i - 1) + "\n";
  }
  for (char const* spec : {"tf_bfc", "tlsf", "best_fit", "ao_first"}) {
    replay_options by_address;
    by_address.frees = free_by::address;
    replay_result const a = run(spec, text, {"simulated"});
    replay_result const b = run(spec, text, {"simulated"}, by_address);
    EXPECT_EQ(a.frees, b.frees) << spec;
    EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes) << spec;
    EXPECT_EQ(a.peak_allocated_bytes, b.peak_allocated_bytes) << spec;
    EXPECT_EQ(a.frag1, b.frag1) << spec;
    EXPECT_EQ(a.ext_frag_at_peak, b.ext_frag_at_peak) << spec;
    EXPECT_EQ(a.index_steps_per_op, b.index_steps_per_op) << spec;
  }
}

}  // namespace
}  // namespace fraglab
