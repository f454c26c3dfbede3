// An LLM inference server's allocations: weights loaded once, then requests of varied
// prompt and output lengths arriving, being batched, generating one token per step and
// finishing, each holding a KV cache that grows as it generates.
//
// - Prefill: a request admitted to the running batch allocates its prompt's KV cache and
//   the prefill activations (hidden states, MLP intermediate, logits of the last token),
//   which die when the prefill ends.
// - Decode: each step allocates the batch's hidden states, MLP intermediate and fp32
//   logits, frees them at the end of the step, and grows every running request's cache by
//   one token.
// - KV cache growth, every `block_tokens` tokens:
//     paged      one new block per layer for K and V together (vLLM-style block tables,
//                Kwon et al. 2023, but allocated on demand rather than from a pre-sized pool);
//     contiguous each layer's K and V are reallocated one block longer and the old copies
//                freed (Hugging Face's growing cache), the pattern that fragments.
// - Arrivals: each step, request after request arrives with probability arrival_percent
//   (a geometric number per step); at most max_batch run at once, the rest queue.
//
// Left out: sampling kernels' workspaces, beam search, prefix sharing, preemption and
// swapping of KV blocks, CUDA graphs.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <cstddef>
#include <cstdint>

namespace fraglab::gen {

enum class kv_cache_layout { paged, contiguous };

struct llm_serving_params {
  std::uint64_t seed = 1;
  std::size_t layers = 32;  // the defaults are Llama-3-8B-shaped (grouped-query attention)
  std::size_t hidden = 4096;
  std::size_t heads = 32;
  std::size_t kv_heads = 8;
  std::size_t ffn = 14336;
  std::size_t vocab = 128256;
  std::size_t dtype_bytes = 2;
  kv_cache_layout layout = kv_cache_layout::contiguous;
  std::size_t block_tokens = 16;
  std::size_t requests = 100;
  std::size_t max_batch = 32;
  unsigned arrival_percent = 40;
  std::size_t prompt_min = 16, prompt_max = 2048;  // log-uniform (every octave equally likely)
  std::size_t output_min = 16, output_max = 1024;
};

// Throws std::invalid_argument for a shape that cannot be built.
// Without `out` the events are in the returned trace; with it they go to `out` as they are
// made and the returned trace holds the name and counts only.
trace::trace generate_llm_serving(llm_serving_params const& p, trace::trace_writer* out = nullptr);

}  // namespace fraglab::gen
