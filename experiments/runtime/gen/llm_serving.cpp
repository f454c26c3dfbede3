#include <fraglab/runtime/gen/llm_serving.hpp>

#include <fraglab/runtime/gen/detail/trace_builder.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <fraglab/engine/detail/bits.hpp>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab::gen {
namespace {

constexpr std::size_t fp32 = 4;
constexpr std::size_t int64 = 8;

class serving_run {
 public:
  serving_run(llm_serving_params const& p, trace::trace_writer* out)
      : p_(p), r_(p.seed), b_("llm-serving-" + std::string(p.layout == kv_cache_layout::paged ? "paged" : "contiguous") +
                                  "-seed" + std::to_string(p.seed),
                              out)
  {
    kv_hidden_ = p.kv_heads * (p.hidden / p.heads);
  }

  trace::trace run()
  {
    load_weights();
    std::size_t arrived = 0;
    while (arrived < p_.requests || !waiting_.empty() || !running_.empty()) {
      while (arrived < p_.requests && r_.chance(p_.arrival_percent)) {
        request q;
        q.prompt = r_.octave_uniform(p_.prompt_min, p_.prompt_max);
        q.output = r_.octave_uniform(p_.output_min, p_.output_max);
        waiting_.push_back(std::move(q));
        ++arrived;
      }
      while (running_.size() < p_.max_batch && !waiting_.empty()) {
        running_.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
        prefill(running_.back());
      }
      if (!running_.empty()) decode_step();
      retire_finished();
    }
    return b_.take();
  }

 private:
  struct request {
    std::size_t prompt = 0, output = 0, generated = 0;
    std::size_t capacity = 0;  // tokens the cache holds room for, in every layer
    std::vector<std::vector<std::uint32_t>> kv;  // per layer: blocks (paged) or K and V (contiguous)
    std::size_t tokens() const { return prompt + generated; }
  };

  std::uint32_t tensor(std::size_t elements, std::size_t element_bytes) { return b_.alloc(elements * element_bytes); }

  void load_weights()
  {
    std::size_t const h = p_.hidden;
    tensor(p_.vocab * h, p_.dtype_bytes);  // embedding
    for (std::size_t l = 0; l < p_.layers; ++l) {
      for (std::size_t elements : {h, h * h, h * kv_hidden_, h * kv_hidden_, h * h, h, h * p_.ffn, h * p_.ffn, p_.ffn * h})
        tensor(elements, p_.dtype_bytes);
    }
    tensor(h, p_.dtype_bytes);            // final norm
    tensor(p_.vocab * h, p_.dtype_bytes);  // output projection
  }

  // The cache grows a block of tokens at a time.
  std::size_t room_for(std::size_t tokens) const { return fraglab::detail::round_up_to_multiple(tokens, p_.block_tokens); }

  // Makes room for `tokens` in layer `l`'s cache; capacity is updated after the last layer.
  void grow_kv(request& q, std::size_t l, std::size_t tokens)
  {
    std::size_t const block = p_.block_tokens;
    std::size_t const wanted = room_for(tokens);
    if (wanted <= q.capacity) return;
    if (q.kv.size() < p_.layers) q.kv.resize(p_.layers);
    std::vector<std::uint32_t>& layer = q.kv[l];
    if (p_.layout == kv_cache_layout::paged) {
      for (std::size_t have = q.capacity; have < wanted; have += block) layer.push_back(tensor(2 * block * kv_hidden_, p_.dtype_bytes));
      return;
    }
    for (std::size_t kv = 0; kv < 2; ++kv) {  // K, then V: the longer copy first, then the old one goes
      std::uint32_t const longer = tensor(wanted * kv_hidden_, p_.dtype_bytes);
      if (layer.size() > kv) {
        b_.free(layer[kv]);
        layer[kv] = longer;
      } else {
        layer.push_back(longer);
      }
    }
  }

  // One forward pass over `rows` tokens; `grow` extends the caches layer by layer.
  template <class Grow>
  void forward(std::size_t rows, Grow grow)
  {
    std::size_t const h = p_.hidden, d = p_.dtype_bytes;
    std::uint32_t residual = tensor(rows * h, d);
    for (std::size_t l = 0; l < p_.layers; ++l) {
      std::uint32_t const normed = tensor(rows * h, d);
      std::uint32_t const qkv = tensor(rows * (h + 2 * kv_hidden_), d);
      grow(l);
      std::uint32_t const attention = tensor(rows * h, d);
      b_.free(qkv);
      b_.free(normed);
      std::uint32_t const projected = tensor(rows * h, d);
      b_.free(attention);
      std::uint32_t const next = tensor(rows * h, d);  // residual add
      b_.free(projected);
      b_.free(residual);
      residual = next;
      std::uint32_t const normed2 = tensor(rows * h, d);
      std::uint32_t const gate_up = tensor(rows * 2 * p_.ffn, d);
      b_.free(normed2);
      std::uint32_t const activated = tensor(rows * p_.ffn, d);
      b_.free(gate_up);
      std::uint32_t const down = tensor(rows * h, d);
      b_.free(activated);
      std::uint32_t const after = tensor(rows * h, d);
      b_.free(down);
      b_.free(residual);
      residual = after;
    }
    b_.free(residual);
  }

  // Logits for `rows` sequences' last tokens, sampled in fp32.
  void sample(std::size_t rows)
  {
    std::uint32_t const logits = tensor(rows * p_.vocab, p_.dtype_bytes);
    std::uint32_t const probabilities = tensor(rows * p_.vocab, fp32);
    b_.free(logits);
    std::uint32_t const next_tokens = tensor(rows, int64);
    b_.free(probabilities);
    b_.free(next_tokens);
  }

  void prefill(request& q)
  {
    std::uint32_t const ids = tensor(q.prompt, int64);
    forward(q.prompt, [&](std::size_t l) { grow_kv(q, l, q.prompt); });
    q.capacity = std::max(q.capacity, room_for(q.prompt));
    sample(1);
    b_.free(ids);
    q.generated = 1;
  }

  void decode_step()
  {
    std::size_t const rows = running_.size();
    std::uint32_t const ids = tensor(rows, int64);
    forward(rows, [&](std::size_t l) {
      for (request& q : running_) grow_kv(q, l, q.tokens());
    });
    for (request& q : running_) {
      q.capacity = std::max(q.capacity, room_for(q.tokens()));
      ++q.generated;
    }
    sample(rows);
    b_.free(ids);
  }

  void retire_finished()
  {
    auto const done = std::stable_partition(running_.begin(), running_.end(),
                                            [](request const& q) { return q.generated < q.output; });
    for (auto it = done; it != running_.end(); ++it)
      for (auto& layer : it->kv) b_.free_all(layer);
    running_.erase(done, running_.end());
  }

  llm_serving_params const p_;
  rng r_;
  detail::trace_builder b_;
  std::size_t kv_hidden_ = 0;
  std::deque<request> waiting_;
  std::vector<request> running_;
};

void check(bool ok, char const* what)
{
  if (!ok) throw std::invalid_argument(std::string("llm-serving workload: ") + what);
}

}  // namespace

trace::trace generate_llm_serving(llm_serving_params const& p, trace::trace_writer* out)
{
  check(p.layers > 0 && p.hidden > 0 && p.heads > 0 && p.kv_heads > 0 && p.ffn > 0 && p.vocab > 0,
        "layers, hidden, heads, kv heads, ffn and vocab must be positive");
  check(p.hidden % p.heads == 0 && p.heads % p.kv_heads == 0, "heads must divide hidden and kv heads divide heads");
  check(p.dtype_bytes == 1 || p.dtype_bytes == 2 || p.dtype_bytes == 4, "dtype must be 1, 2 or 4 bytes");
  check(p.block_tokens > 0 && p.max_batch > 0 && p.requests > 0, "block tokens, max batch and requests must be positive");
  check(p.arrival_percent >= 1 && p.arrival_percent <= 99, "arrival percent must be in 1..99");
  check(p.prompt_min > 0 && p.prompt_min <= p.prompt_max, "need 0 < prompt min <= prompt max");
  check(p.output_min > 0 && p.output_min <= p.output_max, "need 0 < output min <= output max");
  // Every size is a product of these (rows x width, a weight, a sequence's cache): the
  // largest of each kind must fit. A request holds at most prompt_max + output_max tokens,
  // rounded up to a block; a forward pass has at most max(prompt_max, max_batch) rows.
  std::uint64_t tokens = 0;
  check(!__builtin_add_overflow(p.prompt_max, p.output_max, &tokens) && !__builtin_add_overflow(tokens, p.block_tokens, &tokens),
        "prompt max + output max is beyond 2^64 tokens");
  std::uint64_t const rows = std::max(p.prompt_max, p.max_batch);
  check(detail::fits_in_largest_tensor({p.vocab, p.hidden}) && detail::fits_in_largest_tensor({p.hidden, std::max(p.hidden, p.ffn)}) &&
            detail::fits_in_largest_tensor({2, p.block_tokens, p.hidden}) && detail::fits_in_largest_tensor({tokens, p.hidden}) &&
            detail::fits_in_largest_tensor({rows, 3, p.hidden}) && detail::fits_in_largest_tensor({rows, 2, p.ffn}) &&
            detail::fits_in_largest_tensor({rows, p.vocab}),
        "the largest tensor would exceed 2^50 bytes: lower hidden, ffn, vocab, block tokens, max batch or the prompt and output lengths");
  return serving_run(p, out).run();
}

}  // namespace fraglab::gen
