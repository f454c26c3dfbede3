// A short generated training trace and the decisions a replay of it makes, for the backend
// tests that show a preset over real memory (host or device) deciding as it does over the
// simulated backend: the same acquisitions, peaks and failures; only the addresses differ.
#pragma once

#include <fraglab/runtime/gen/transformer_training.hpp>
#include <fraglab/runtime/registry/composition.hpp>

#include <gtest/gtest.h>

#include <string>

namespace fraglab::testing {

// Two layers of width 256, batch 4, context 128, three iterations.
inline trace::trace const& small_training_trace()
{
  static trace::trace const t = [] {
    gen::transformer_training_params p;
    p.layers = 2;
    p.hidden = 256;
    p.heads = 4;
    p.vocab = 1000;
    p.batch = 4;
    p.seq_len = p.seq_len_max = 128;
    p.iterations = 3;
    return gen::generate_transformer_training(p);
  }();
  return t;
}

inline replay_result replay_small_training(std::string const& policy, param_set const& p, std::string const& backend)
{
  replay_options o;
  o.repeats = 0;
  o.strict = true;
  return make_composition(policy, p, backend_choice{backend})->replay(small_training_trace(), o);
}

inline void expect_same_decisions(replay_result const& real, replay_result const& simulated)
{
  EXPECT_EQ(real.failed_allocs, simulated.failed_allocs);
  EXPECT_EQ(real.acquisitions, simulated.acquisitions);
  EXPECT_EQ(real.peak_reserved_bytes, simulated.peak_reserved_bytes);
  EXPECT_EQ(real.peak_allocated_bytes, simulated.peak_allocated_bytes);
}

}  // namespace fraglab::testing
