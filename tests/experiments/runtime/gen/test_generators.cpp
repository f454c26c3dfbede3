// Generated workloads: exact shapes on models small enough to work out by hand, and the
// invariants every generated trace keeps (well-formed, deterministic per seed).
#include <fraglab/runtime/gen/detail/trace_builder.hpp>
#include <fraglab/runtime/gen/llm_serving.hpp>
#include <fraglab/runtime/gen/phases_and_random.hpp>
#include <fraglab/runtime/gen/transformer_training.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

namespace fraglab {
namespace {

struct live_profile {
  std::size_t peak_live = 0, live_at_end = 0, blocks_at_end = 0;
};

// Fails the test on an allocation under a live id, a free of an id not live, or a zero size.
live_profile check_well_formed(trace::trace const& t)
{
  std::vector<std::size_t> live(t.slots, 0);
  live_profile p;
  std::size_t now = 0;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    trace::event const& e = t.events[i];
    EXPECT_LT(e.slot, t.slots) << "event " << i;
    if (e.kind == trace::op::alloc) {
      EXPECT_GT(e.size, 0u) << "event " << i;
      EXPECT_EQ(live[e.slot], 0u) << "event " << i << " allocates a live id";
      live[e.slot] = e.size;
      now += e.size;
      p.peak_live = std::max(p.peak_live, now);
    } else {
      EXPECT_NE(live[e.slot], 0u) << "event " << i << " frees an id that is not live";
      now -= live[e.slot];
      live[e.slot] = 0;
    }
  }
  p.live_at_end = now;
  p.blocks_at_end = static_cast<std::size_t>(std::count_if(live.begin(), live.end(), [](std::size_t s) { return s != 0; }));
  return p;
}

std::vector<std::size_t> sizes(trace::trace const& t)
{
  std::vector<std::size_t> s;
  for (auto const& e : t.events) s.push_back(e.kind == trace::op::alloc ? e.size : 0);
  return s;
}

gen::transformer_training_params tiny_transformer()
{
  gen::transformer_training_params p;
  p.layers = 1;
  p.hidden = 4;
  p.heads = 2;
  p.ffn_multiplier = 4;
  p.vocab = 10;
  p.batch = 1;
  p.seq_len = p.seq_len_max = 2;
  p.dtype_bytes = 4;
  p.iterations = 2;
  return p;
}

TEST(TransformerTraining, ParametersComeFirstInModuleOrderAsFp32)
{
  // hidden 4, MLP 16, vocab 10, 2 positions: token embedding 40, positions 8; the block's
  // ln1 4+4, qkv 48+12, proj 16+4, ln2 4+4, fc1 64+16, fc2 64+4; the final norm 4+4.
  auto const t = gen::generate_transformer_training(tiny_transformer());
  std::vector<std::size_t> const expected{40, 8, 4, 4, 48, 12, 16, 4, 4, 4, 64, 16, 64, 4, 4, 4};
  ASSERT_GE(t.events.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(t.events[i].kind, trace::op::alloc);
    EXPECT_EQ(t.events[i].size, expected[i] * 4) << "parameter " << i;
  }
}

TEST(TransformerTraining, WhatOutlivesTheLoopIsWeightsGradientsAndOptimizerState)
{
  // 300 parameters; at the end each has its fp32 weight and gradient, plus the moments.
  auto p = tiny_transformer();
  for (auto [optimizer, copies] : {std::pair{gen::optimizer_kind::sgd, 2u}, std::pair{gen::optimizer_kind::momentum, 3u},
                                   std::pair{gen::optimizer_kind::adam, 4u}}) {
    p.optimizer = optimizer;
    auto const profile = check_well_formed(gen::generate_transformer_training(p));
    EXPECT_EQ(profile.live_at_end, 300u * 4 * copies);
    EXPECT_EQ(profile.blocks_at_end, 16u * copies);
  }
}

TEST(TransformerTraining, EveryIterationAfterTheFirstRepeatsTheSameEventsWhenShapesAreFixed)
{
  auto p = tiny_transformer();
  p.layers = 2;
  p.dtype_bytes = 2;  // with autocast's copies
  std::vector<std::size_t> per_iteration;
  for (std::size_t n : {1, 2, 3, 4}) {
    p.iterations = n;
    per_iteration.push_back(gen::generate_transformer_training(p).events.size());
  }
  // 28 parameters (2 embeddings, 12 a block, the final norm's 2). Later iterations begin by
  // freeing the 28 gradients (zero_grad); the first instead follows the 28 weights and adds
  // Adam's 56 moments at its step.
  std::size_t const period = per_iteration[1] - per_iteration[0];
  EXPECT_EQ(per_iteration[2] - per_iteration[1], period);
  EXPECT_EQ(per_iteration[3] - per_iteration[2], period);
  EXPECT_EQ(per_iteration[0], 28 + (period - 28) + 56);
  auto const three = sizes([&] { p.iterations = 3; return gen::generate_transformer_training(p); }());
  EXPECT_TRUE(std::equal(three.end() - static_cast<std::ptrdiff_t>(period), three.end(),
                         three.end() - static_cast<std::ptrdiff_t>(2 * period)));
}

TEST(TransformerTraining, CheckpointingLowersThePeakAndNaiveAttentionRaisesIt)
{
  gen::transformer_training_params p;
  p.layers = 8;
  p.iterations = 1;
  auto const plain = check_well_formed(gen::generate_transformer_training(p));
  p.activation_checkpointing = true;
  auto const checkpointed = check_well_formed(gen::generate_transformer_training(p));
  p.activation_checkpointing = false;
  p.attention = gen::attention_kind::naive;
  auto const naive = check_well_formed(gen::generate_transformer_training(p));
  EXPECT_LT(checkpointed.peak_live, plain.peak_live);
  // Naive attention keeps batch x heads x seq^2 probabilities in fp32 and bf16 per layer:
  // 8 x 12 x 512^2 x 6 bytes = 151 MB a layer over 8 layers.
  EXPECT_GT(naive.peak_live, plain.peak_live + 8 * 150'000'000);
  EXPECT_EQ(plain.live_at_end, checkpointed.live_at_end);
}

TEST(TransformerTraining, VariableSequenceLengthsAreDrawnPerIterationAndDeterministicPerSeed)
{
  gen::transformer_training_params p;
  p.layers = 2;
  p.seq_len = 64;
  p.seq_len_max = 1024;
  p.seq_dist = gen::sequence_length_distribution::long_tail;
  p.iterations = 6;
  auto const a = gen::generate_transformer_training(p);
  auto const b = gen::generate_transformer_training(p);
  EXPECT_EQ(sizes(a), sizes(b));
  p.seed = 2;
  EXPECT_NE(sizes(a), sizes(gen::generate_transformer_training(p)));
  // The input ids (batch x seq x 8 bytes) show each iteration's length.
  std::vector<std::size_t> lengths;
  for (auto const& e : a.events)
    if (e.kind == trace::op::alloc && e.size % (8 * 8) == 0 && e.size / 64 >= 64 && e.size / 64 <= 1024 && lengths.size() < 100)
      lengths.push_back(e.size / 64);
  check_well_formed(a);
  EXPECT_GT(std::set<std::size_t>(lengths.begin(), lengths.end()).size(), 1u);
}

TEST(TransformerTraining, RefusesShapesItCannotBuild)
{
  auto p = tiny_transformer();
  p.heads = 3;  // does not divide 4
  EXPECT_THROW(gen::generate_transformer_training(p), std::invalid_argument);
  p = tiny_transformer();
  p.seq_len = 4;  // above seq_len_max 2
  EXPECT_THROW(gen::generate_transformer_training(p), std::invalid_argument);
  p = tiny_transformer();
  p.dtype_bytes = 8;
  EXPECT_THROW(gen::generate_transformer_training(p), std::invalid_argument);
}

// Sizes are products of the parameters in 64 bits: a shape whose largest tensor is beyond
// 2^50 bytes is refused rather than written with sizes that wrapped (batch 4e9 x seq 4e9
// gave allocations of 1.8e19 bytes). Naive attention's seq^2 scores count only where asked.
TEST(TransformerTraining, RefusesShapesWhoseSizesWouldWrap)
{
  auto const refusal = [](gen::transformer_training_params const& p) -> std::string {
    try {
      (void)gen::generate_transformer_training(p);
    } catch (std::invalid_argument const& e) {
      return e.what();
    }
    return "";
  };
  auto p = tiny_transformer();
  p.batch = p.seq_len = p.seq_len_max = 4'000'000'000;
  EXPECT_NE(refusal(p).find("the largest tensor would exceed 2^50 bytes"), std::string::npos);
  p = tiny_transformer();
  p.ffn_multiplier = std::uint64_t{1} << 62;
  EXPECT_NE(refusal(p).find("lower ffn_multiplier or hidden"), std::string::npos);
  // 1 x 2 heads x 2^24 tokens x 8 bytes fits; with seq^2 scores it is 2^52 bytes.
  p = tiny_transformer();
  p.seq_len = p.seq_len_max = std::size_t{1} << 24;
  p.layers = p.iterations = 1;
  p.attention = gen::attention_kind::naive;
  EXPECT_NE(refusal(p), "");
  p.attention = gen::attention_kind::fused;
  EXPECT_EQ(refusal(p), "");
}

// The bytes live at once are a sum the replay keeps in 64 bits too.
TEST(TraceBuilder, RefusesMoreThan2To64BytesLiveAtOnce)
{
  gen::detail::trace_builder b("huge");
  std::uint32_t const first = b.alloc(std::uint64_t{1} << 63);
  EXPECT_THROW((void)b.alloc(std::uint64_t{1} << 63), std::invalid_argument);
  b.free(first);
  EXPECT_NO_THROW((void)b.alloc(std::uint64_t{1} << 63));  // the first is no longer live
}

gen::llm_serving_params small_server()
{
  gen::llm_serving_params p;
  p.layers = 2;
  p.hidden = 64;
  p.heads = 4;
  p.kv_heads = 2;  // 32 values per token per K or V
  p.ffn = 128;
  p.vocab = 1000;
  p.requests = 30;
  p.max_batch = 4;
  p.prompt_max = 256;
  p.output_max = 64;
  return p;
}

TEST(LlmServing, OnlyTheWeightsOutliveTheRequests)
{
  auto const p = small_server();
  auto const t = gen::generate_llm_serving(p);
  auto const profile = check_well_formed(t);
  // embedding, per layer 2 norms + q, k, v, o + gate, up, down, the final norm, the head; bf16.
  std::size_t const h = 64, kv = 32;
  std::size_t const weights = 2 * (1000 * h + 2 * (2 * h + 2 * h * h + 2 * h * kv + 3 * h * 128) + h + 1000 * h);
  EXPECT_EQ(profile.live_at_end, weights);
  EXPECT_EQ(profile.blocks_at_end, 1u + 2 * 9 + 2);
  EXPECT_GT(profile.peak_live, weights);
}

std::size_t count_allocations_of(trace::trace const& t, std::size_t size, std::size_t skip)
{
  return static_cast<std::size_t>(std::count_if(t.events.begin() + static_cast<std::ptrdiff_t>(skip), t.events.end(),
                                                [&](auto const& e) { return e.kind == trace::op::alloc && e.size == size; }));
}

TEST(LlmServing, PagedCachesGrowByWholeBlocksAndContiguousOnesByReallocation)
{
  // One request, prompt 36, output 30, blocks of 16 tokens, 32 K (and V) values a token:
  // prefill makes room for 48 tokens; decoding reaches token 49 (room for 64) and 65 (80).
  auto p = small_server();
  p.requests = 1;
  p.prompt_min = p.prompt_max = 36;
  p.output_min = p.output_max = 30;
  std::size_t const weights = 1 + 9 * p.layers + 2;  // events before the first request
  p.layout = gen::kv_cache_layout::paged;
  auto const paged = gen::generate_llm_serving(p);
  check_well_formed(paged);
  EXPECT_EQ(count_allocations_of(paged, 2 * 16 * 32 * 2, weights), 2u * (3 + 1 + 1));  // K+V blocks, bf16
  p.layout = gen::kv_cache_layout::contiguous;
  auto const contiguous = gen::generate_llm_serving(p);
  check_well_formed(contiguous);
  for (std::size_t tokens : {48, 64, 80})  // K and V of both layers at each length
    EXPECT_EQ(count_allocations_of(contiguous, tokens * 32 * 2, weights), 4u) << tokens << " tokens";
  EXPECT_EQ(count_allocations_of(contiguous, 2 * 16 * 32 * 2, weights), 0u);
}

TEST(LlmServing, DeterministicPerSeedAndRefusesBadShapes)
{
  auto p = small_server();
  EXPECT_EQ(sizes(gen::generate_llm_serving(p)), sizes(gen::generate_llm_serving(p)));
  p.seed = 9;
  EXPECT_NE(sizes(gen::generate_llm_serving(small_server())), sizes(gen::generate_llm_serving(p)));
  p = small_server();
  p.kv_heads = 3;  // does not divide 4 heads
  EXPECT_THROW(gen::generate_llm_serving(p), std::invalid_argument);
  p = small_server();
  p.arrival_percent = 100;  // the queue would never stop growing within a step
  EXPECT_THROW(gen::generate_llm_serving(p), std::invalid_argument);
  p = small_server();
  p.vocab = std::uint64_t{1} << 50;  // its embedding alone is 2^56 x 2 bytes
  EXPECT_THROW(gen::generate_llm_serving(p), std::invalid_argument);
  p = small_server();
  p.prompt_max = p.output_max = std::uint64_t{1} << 63;  // their sum is beyond 2^64 tokens
  EXPECT_THROW(gen::generate_llm_serving(p), std::invalid_argument);
}

TEST(PhasesAndRandom, WellFormedBalancedAndDeterministic)
{
  auto const phases = gen::generate_phases({7, 6, 500});
  auto const profile = check_well_formed(phases);
  EXPECT_EQ(profile.live_at_end, 0u);
  EXPECT_EQ(sizes(phases), sizes(gen::generate_phases({7, 6, 500})));
  gen::random_params r;
  r.allocations = 5000;
  auto const random = gen::generate_random(r);
  EXPECT_EQ(check_well_formed(random).live_at_end, 0u);
  EXPECT_EQ(random.allocs, 5000u);
}

// What a writer receives: every batch, in order, and the summary it was finished with.
struct collecting_writer final : trace::trace_writer {
  std::vector<trace::event> events;
  std::size_t batches = 0, largest_batch = 0;
  void write(std::span<trace::event const> b) override
  {
    events.insert(events.end(), b.begin(), b.end());
    ++batches;
    largest_batch = std::max(largest_batch, b.size());
  }
  void finish(trace::trace const&) override {}
};

bool same_events(std::vector<trace::event> const& a, std::vector<trace::event> const& b)
{
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](trace::event const& x, trace::event const& y) {
    return x.kind == y.kind && x.slot == y.slot && x.size == y.size && x.alignment == y.alignment && x.stream == y.stream;
  });
}

// Given a writer, a generator hands its events over a batch at a time and keeps none: the
// same events, in the same order, as the trace it builds in memory.
TEST(Generators, StreamToAWriterTheEventsTheyWouldKeep)
{
  gen::random_params r;
  r.allocations = 50000;
  auto const kept = gen::generate_random(r);
  collecting_writer w;
  auto const summary = gen::generate_random(r, &w);
  EXPECT_TRUE(summary.events.empty());
  EXPECT_EQ(summary.allocs, kept.allocs);
  EXPECT_EQ(summary.frees, kept.frees);
  EXPECT_EQ(summary.slots, kept.slots);
  EXPECT_TRUE(same_events(w.events, kept.events));
  EXPECT_GT(w.batches, 1u);
  EXPECT_LE(w.largest_batch, trace::event_batches::batch_size);

  collecting_writer tw;
  auto const training = gen::generate_transformer_training(tiny_transformer(), &tw);
  EXPECT_TRUE(same_events(tw.events, gen::generate_transformer_training(tiny_transformer()).events));
  EXPECT_EQ(training.allocs + training.frees, tw.events.size());
}

}  // namespace
}  // namespace fraglab
