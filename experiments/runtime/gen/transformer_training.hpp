// A decoder-only transformer's training loop as its CUDA caching allocator sees it:
// one allocation per tensor, in the order PyTorch's autograd creates and releases them.
//
// What the model captures, per iteration:
// - parameters (fp32 master weights), allocated once before the first iteration;
// - under mixed precision (dtype 2 bytes) autocast's low-precision weight copies, made at
//   each linear layer's forward and held by autograd until that layer's backward;
// - forward activations saved for backward (layer-norm inputs and statistics, the qkv
//   projection, attention output and log-sum-exp, the MLP pre-activation and GELU output),
//   each freed at its backward use, so memory ramps up through the forward pass and back
//   down through the backward pass (the sawtooth of Rhu et al. 2016, vDNN);
// - with activation checkpointing only each layer's input is kept, and the layer's
//   activations are recomputed just before its backward (Chen et al. 2016);
// - the logits and fp32 log-softmax of the loss, the largest tensors of a small model;
// - gradients allocated at their first accumulation and freed by zero_grad(set_to_none),
//   PyTorch 2.x's default; optimizer state (Adam: two fp32 moments, momentum SGD: one)
//   allocated at the first step and kept;
// - a sequence length per iteration: fixed, uniform, or long-tailed (log-uniform), the
//   variable-shape case that fragments caching allocators.
//
// Left out: dropout masks, kernel workspaces other than attention's, communication
// buffers, and the CUDA stream structure (everything is on stream 0).
#pragma once

#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <cstddef>
#include <cstdint>

namespace fraglab::gen {

enum class sequence_length_distribution { fixed, uniform, long_tail };
enum class optimizer_kind { sgd, momentum, adam };
enum class attention_kind { fused, naive };

struct transformer_training_params {
  std::uint64_t seed = 1;
  std::size_t layers = 12;  // the defaults are GPT-2 small at batch 8
  std::size_t hidden = 768;
  std::size_t heads = 12;
  std::size_t ffn_multiplier = 4;
  std::size_t vocab = 50257;
  std::size_t batch = 8;
  std::size_t seq_len = 512;      // the length, or the shortest when it varies
  std::size_t seq_len_max = 512;  // the longest; the position table is this long
  sequence_length_distribution seq_dist = sequence_length_distribution::fixed;
  std::size_t dtype_bytes = 2;    // activations: 2 (bf16/fp16 autocast) or 4 (fp32)
  bool activation_checkpointing = false;
  attention_kind attention = attention_kind::fused;  // naive keeps the heads x seq^2 scores
  optimizer_kind optimizer = optimizer_kind::adam;
  std::size_t iterations = 4;
};

// Throws std::invalid_argument for a shape that cannot be built (zero sizes, heads not
// dividing hidden, seq_len above seq_len_max, dtype other than 2 or 4).
// Without `out` the events are in the returned trace; with it they go to `out` as they are
// made and the returned trace holds the name and counts only.
trace::trace generate_transformer_training(transformer_training_params const& p, trace::trace_writer* out = nullptr);

}  // namespace fraglab::gen
