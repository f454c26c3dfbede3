#include <fraglab/runtime/gen/transformer_training.hpp>

#include <fraglab/runtime/gen/detail/trace_builder.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fraglab::gen {
namespace {

constexpr std::size_t fp32 = 4;
constexpr std::size_t int64 = 8;
constexpr std::uint32_t no_tensor = UINT32_MAX;
constexpr std::size_t no_bias = SIZE_MAX;

class training_run {
 public:
  training_run(transformer_training_params const& p, trace::trace_writer* out) : p_(p), r_(p.seed), b_(trace_name(p), out)
  {
    ffn_ = p.ffn_multiplier * p.hidden;
    mixed_ = p.dtype_bytes != fp32;
  }

  trace::trace run()
  {
    build_parameters();
    for (std::size_t i = 0; i < p_.iterations; ++i) {
      zero_grad();
      tokens_ = p_.batch * draw_sequence_length();
      std::uint32_t const grad = forward_and_loss();
      backward(grad);
      optimizer_step();
    }
    return b_.take();
  }

 private:
  struct parameter {
    std::size_t elements;
    std::uint32_t grad = no_tensor;
    std::vector<std::uint32_t> state;  // optimizer moments
  };
  struct linear {
    std::size_t weight, bias, in, out;
  };
  struct layer_parameters {
    std::size_t ln1_weight, ln1_bias, ln2_weight, ln2_bias;
    linear qkv, proj, fc1, fc2;
  };
  // What one linear layer's forward leaves for its backward: the (cast) input and weights.
  struct linear_saved {
    std::uint32_t input = no_tensor, weight = no_tensor, bias = no_tensor;
  };
  // Everything a layer's forward leaves for its backward, named after the op that keeps it.
  struct layer_saved {
    std::uint32_t x_in = no_tensor;  // the residual stream entering the layer (ln1's input)
    std::array<std::uint32_t, 2> ln1_stats{no_tensor, no_tensor}, ln2_stats{no_tensor, no_tensor};
    linear_saved qkv, proj, fc1, fc2;
    std::uint32_t qkv_out = no_tensor;
    std::array<std::uint32_t, 2> attention{no_tensor, no_tensor};  // fused: output, log-sum-exp; naive: probabilities fp32, cast
    std::uint32_t x_mid = no_tensor;  // after the attention residual (ln2's input)
    std::uint32_t fc1_out = no_tensor;  // GELU's input; GELU's output is fc2's saved input
  };

  static std::string trace_name(transformer_training_params const& p)
  {
    return "transformer-l" + std::to_string(p.layers) + "-h" + std::to_string(p.hidden) + "-seed" + std::to_string(p.seed);
  }

  std::uint32_t tensor(std::size_t elements, std::size_t element_bytes) { return b_.alloc(elements * element_bytes); }
  void release(std::uint32_t& id)
  {
    if (id != no_tensor) b_.free(id);
    id = no_tensor;
  }
  // Under recomputation (no grad) a tensor dies at its last forward use instead of being saved.
  void keep_or_release(std::uint32_t& id, bool keep)
  {
    if (!keep) release(id);
  }

  std::size_t draw_sequence_length()
  {
    switch (p_.seq_dist) {
      case sequence_length_distribution::uniform: return r_.uniform(p_.seq_len, p_.seq_len_max);
      case sequence_length_distribution::long_tail: return r_.octave_uniform(p_.seq_len, p_.seq_len_max);
      default: return p_.seq_len;
    }
  }

  std::size_t add_parameter(std::size_t elements)
  {
    params_.push_back(parameter{elements, no_tensor, {}});
    b_.alloc(elements * fp32);  // master weights live for the whole run
    return params_.size() - 1;
  }

  linear head() const { return {token_embedding_, no_bias, p_.hidden, p_.vocab}; }  // tied, no bias

  linear add_linear(std::size_t in, std::size_t out) { return {add_parameter(out * in), add_parameter(out), in, out}; }

  void build_parameters()
  {
    std::size_t const h = p_.hidden;
    token_embedding_ = add_parameter(p_.vocab * h);  // tied with the output projection
    position_embedding_ = add_parameter(p_.seq_len_max * h);
    for (std::size_t l = 0; l < p_.layers; ++l) {
      layer_parameters lp{};
      lp.ln1_weight = add_parameter(h);
      lp.ln1_bias = add_parameter(h);
      lp.qkv = add_linear(h, 3 * h);
      lp.proj = add_linear(h, h);
      lp.ln2_weight = add_parameter(h);
      lp.ln2_bias = add_parameter(h);
      lp.fc1 = add_linear(h, ffn_);
      lp.fc2 = add_linear(ffn_, h);
      layers_.push_back(lp);
    }
    final_ln_weight_ = add_parameter(h);
    final_ln_bias_ = add_parameter(h);
  }

  // AccumulateGrad: the first gradient of an iteration becomes .grad; later ones (a tied
  // weight) are added in place and released. Under autocast the gradient arrives in the
  // low precision and is cast up to the fp32 parameter's type first.
  void accumulate_grad(std::size_t index)
  {
    parameter& param = params_[index];
    std::uint32_t low = mixed_ ? tensor(param.elements, p_.dtype_bytes) : no_tensor;
    std::uint32_t grad = tensor(param.elements, fp32);
    release(low);
    if (param.grad == no_tensor) param.grad = grad;
    else release(grad);
  }

  // An op whose input dies as soon as its output exists (a cast, a copy, an elementwise
  // gradient): the output is allocated first, then the input freed.
  std::uint32_t replace(std::uint32_t& from, std::size_t elements, std::size_t element_bytes)
  {
    std::uint32_t const to = tensor(elements, element_bytes);
    release(from);
    return to;
  }

  // autocast: an fp32 tensor goes into a low-precision matmul as a cast copy.
  std::uint32_t cast_for_matmul(std::uint32_t& fp32_tensor, std::size_t elements)
  {
    return mixed_ ? replace(fp32_tensor, elements, p_.dtype_bytes) : std::exchange(fp32_tensor, no_tensor);
  }

  // y = x W^T + b. Returns y; `saved` keeps the input and the cast weights for backward.
  std::uint32_t linear_forward(linear const& l, std::uint32_t& input, linear_saved& saved, bool keep)
  {
    if (mixed_) {  // autocast's weight copies, held by the graph until this layer's backward
      saved.weight = tensor(l.in * l.out, p_.dtype_bytes);
      if (l.bias != no_bias) saved.bias = tensor(l.out, p_.dtype_bytes);
    }
    std::uint32_t const out = tensor(tokens_ * l.out, p_.dtype_bytes);
    saved.input = std::exchange(input, no_tensor);
    keep_or_release(saved.input, keep);
    keep_or_release(saved.weight, keep);
    keep_or_release(saved.bias, keep);
    return out;
  }

  std::uint32_t linear_backward(linear const& l, linear_saved& saved, std::uint32_t& grad_out)
  {
    std::uint32_t const grad_in = tensor(tokens_ * l.in, p_.dtype_bytes);
    accumulate_grad(l.weight);
    if (l.bias != no_bias) accumulate_grad(l.bias);
    release(grad_out);
    release(saved.input);
    release(saved.weight);
    release(saved.bias);
    return grad_in;
  }

  // LayerNorm runs in fp32 under autocast; returns its output cast for the next matmul.
  std::uint32_t layer_norm_forward(std::array<std::uint32_t, 2>& stats, bool keep)
  {
    std::uint32_t out = tensor(tokens_ * p_.hidden, fp32);
    stats = {tensor(tokens_, fp32), tensor(tokens_, fp32)};  // mean, 1/std
    keep_or_release(stats[0], keep);
    keep_or_release(stats[1], keep);
    return cast_for_matmul(out, tokens_ * p_.hidden);
  }

  // From the gradient of the cast output to the gradient of the LayerNorm's input.
  std::uint32_t layer_norm_backward(std::size_t weight, std::size_t bias, std::array<std::uint32_t, 2>& stats,
                                    std::uint32_t& input, std::uint32_t& grad_out)
  {
    if (mixed_) grad_out = replace(grad_out, tokens_ * p_.hidden, fp32);
    std::uint32_t const grad_in = tensor(tokens_ * p_.hidden, fp32);
    accumulate_grad(weight);
    accumulate_grad(bias);
    release(grad_out);
    release(stats[0]);
    release(stats[1]);
    release(input);
    return grad_in;
  }

  // One transformer block (pre-norm GPT-2). With keep false it is the no-grad first pass of
  // activation checkpointing: every intermediate dies at its last use.
  std::uint32_t layer_forward(std::size_t l, std::uint32_t x_in, layer_saved& s, bool keep)
  {
    layer_parameters const& lp = layers_[l];
    std::size_t const h = p_.hidden, seq = tokens_ / p_.batch;
    s.x_in = x_in;
    std::uint32_t normed = layer_norm_forward(s.ln1_stats, keep);
    s.qkv_out = linear_forward(lp.qkv, normed, s.qkv, keep);
    std::uint32_t attention_out;
    if (p_.attention == attention_kind::fused) {  // FlashAttention: output and log-sum-exp only
      attention_out = tensor(tokens_ * h, p_.dtype_bytes);
      s.attention = {no_tensor, tensor(p_.batch * p_.heads * seq, fp32)};
    } else {  // scores, softmax in fp32, cast back for the second matmul, heads merged by a copy
      std::size_t const scores = p_.batch * p_.heads * seq * seq;
      std::uint32_t raw = tensor(scores, p_.dtype_bytes);
      s.attention[0] = replace(raw, scores, fp32);
      s.attention[1] = mixed_ ? tensor(scores, p_.dtype_bytes) : no_tensor;
      std::uint32_t heads = tensor(tokens_ * h, p_.dtype_bytes);
      attention_out = replace(heads, tokens_ * h, p_.dtype_bytes);
    }
    keep_or_release(s.attention[0], keep);
    keep_or_release(s.attention[1], keep);
    keep_or_release(s.qkv_out, keep);
    std::uint32_t proj = linear_forward(lp.proj, attention_out, s.proj, keep);
    s.x_mid = tensor(tokens_ * h, fp32);  // residual add promotes to fp32
    release(proj);
    std::uint32_t normed2 = layer_norm_forward(s.ln2_stats, keep);
    s.fc1_out = linear_forward(lp.fc1, normed2, s.fc1, keep);
    std::uint32_t gelu_out = tensor(tokens_ * ffn_, p_.dtype_bytes);
    keep_or_release(s.fc1_out, keep);
    std::uint32_t fc2 = linear_forward(lp.fc2, gelu_out, s.fc2, keep);
    std::uint32_t const x_out = tensor(tokens_ * h, fp32);
    release(fc2);
    keep_or_release(s.x_mid, keep);
    return x_out;
  }

  std::uint32_t residual_into_branch() { return mixed_ ? tensor(tokens_ * p_.hidden, p_.dtype_bytes) : no_tensor; }

  std::uint32_t layer_backward(std::size_t l, layer_saved& s, std::uint32_t& grad)
  {
    layer_parameters const& lp = layers_[l];
    std::size_t const h = p_.hidden, seq = tokens_ / p_.batch;
    // MLP branch. The residual passes `grad` on unchanged, to be summed with the branch's
    // gradient below; only autocast needs a low-precision copy of it for the branch.
    std::uint32_t g_branch = residual_into_branch();
    std::uint32_t g = linear_backward(lp.fc2, s.fc2, g_branch);  // d GELU output
    std::uint32_t g_pre = replace(g, tokens_ * ffn_, p_.dtype_bytes);  // through GELU
    release(s.fc1_out);
    g = linear_backward(lp.fc1, s.fc1, g_pre);
    std::uint32_t branch = layer_norm_backward(lp.ln2_weight, lp.ln2_bias, s.ln2_stats, s.x_mid, g);
    std::uint32_t grad_mid = tensor(tokens_ * h, fp32);
    release(branch);
    release(grad);
    // Attention branch.
    g_branch = residual_into_branch();
    std::uint32_t g_att = linear_backward(lp.proj, s.proj, g_branch);
    std::uint32_t g_qkv = tensor(tokens_ * 3 * h, p_.dtype_bytes);
    if (p_.attention == attention_kind::fused) {  // the kernel's fp32 workspaces
      std::uint32_t delta = tensor(p_.batch * p_.heads * seq, fp32);
      std::uint32_t dq_accum = tensor(tokens_ * h, fp32);
      release(dq_accum);
      release(delta);
    } else {
      std::size_t const scores = p_.batch * p_.heads * seq * seq;
      std::uint32_t g_probs = tensor(scores, p_.dtype_bytes);
      std::uint32_t g_scores = tensor(scores, fp32);
      release(g_probs);
      release(g_scores);
    }
    release(g_att);
    release(s.attention[0]);
    release(s.attention[1]);
    release(s.qkv_out);
    g = linear_backward(lp.qkv, s.qkv, g_qkv);
    branch = layer_norm_backward(lp.ln1_weight, lp.ln1_bias, s.ln1_stats, s.x_in, g);
    std::uint32_t const grad_in = tensor(tokens_ * h, fp32);
    release(branch);
    release(grad_mid);
    grad = no_tensor;
    return grad_in;
  }

  // Embedding, the blocks, the final norm, the tied output projection and the loss.
  // Returns the gradient of the loss, ready for backward.
  std::uint32_t forward_and_loss()
  {
    std::size_t const h = p_.hidden, seq = tokens_ / p_.batch;
    input_ids_ = tensor(tokens_, int64);
    targets_ = tensor(tokens_, int64);
    std::uint32_t tok = tensor(tokens_ * h, fp32), pos = tensor(seq * h, fp32);
    std::uint32_t x = tensor(tokens_ * h, fp32);
    release(tok);
    release(pos);
    saved_.assign(p_.layers, {});
    bool const keep = !p_.activation_checkpointing;
    for (std::size_t l = 0; l < p_.layers; ++l) {
      // Checkpointed (keep false), the block releases everything but its input: the checkpoint.
      x = layer_forward(l, x, saved_[l], keep);
    }
    x_final_ = x;
    std::uint32_t normed = layer_norm_forward(final_stats_, true);
    head_ = {};
    std::uint32_t logits = linear_forward(head(), normed, head_, true);
    if (mixed_) logits = replace(logits, tokens_ * p_.vocab, fp32);  // cross entropy runs in fp32
    log_probs_ = tensor(tokens_ * p_.vocab, fp32);
    release(logits);
    loss_ = tensor(1, fp32);  // kept until the iteration ends, as loss.item() needs it
    return tensor(1, fp32);   // loss.backward() seeds a gradient of one
  }

  void backward(std::uint32_t grad)
  {
    std::uint32_t g_log_probs = tensor(tokens_ * p_.vocab, fp32);  // through nll_loss
    release(grad);
    release(targets_);
    std::uint32_t g_logits = replace(g_log_probs, tokens_ * p_.vocab, fp32);  // through log_softmax
    release(log_probs_);
    if (mixed_) g_logits = replace(g_logits, tokens_ * p_.vocab, p_.dtype_bytes);
    std::uint32_t g_normed = linear_backward(head(), head_, g_logits);
    std::uint32_t g = layer_norm_backward(final_ln_weight_, final_ln_bias_, final_stats_, x_final_, g_normed);
    for (std::size_t l = p_.layers; l-- > 0;) {
      layer_saved& s = saved_[l];
      if (p_.activation_checkpointing) {  // recompute the block from its saved input
        std::uint32_t out = layer_forward(l, s.x_in, s, true);
        release(out);
      }
      g = layer_backward(l, s, g);
    }
    accumulate_grad(token_embedding_);  // the tied weight's second gradient is summed in place
    accumulate_grad(position_embedding_);
    release(input_ids_);
    release(g);
    release(loss_);
  }

  void optimizer_step()
  {
    std::size_t const moments = p_.optimizer == optimizer_kind::adam ? 2 : p_.optimizer == optimizer_kind::momentum ? 1 : 0;
    for (parameter& param : params_)
      while (param.state.size() < moments) param.state.push_back(tensor(param.elements, fp32));
    if (p_.optimizer != optimizer_kind::adam) return;
    // The foreach implementation computes sqrt(v) + eps for every parameter at once.
    std::vector<std::uint32_t> denominators;
    for (parameter const& param : params_) denominators.push_back(tensor(param.elements, fp32));
    b_.free_all(denominators);
  }

  void zero_grad()  // set_to_none=True
  {
    for (parameter& param : params_) release(param.grad);
  }

  transformer_training_params const p_;
  rng r_;
  detail::trace_builder b_;
  std::size_t ffn_ = 0;
  bool mixed_ = false;
  std::size_t tokens_ = 0;
  std::vector<parameter> params_;
  std::vector<layer_parameters> layers_;
  std::size_t token_embedding_ = 0, position_embedding_ = 0, final_ln_weight_ = 0, final_ln_bias_ = 0;
  std::vector<layer_saved> saved_;
  std::uint32_t input_ids_ = no_tensor, targets_ = no_tensor, x_final_ = no_tensor, log_probs_ = no_tensor;
  std::uint32_t loss_ = no_tensor;
  std::array<std::uint32_t, 2> final_stats_{no_tensor, no_tensor};
  linear_saved head_;
};

void check(bool ok, char const* what)
{
  if (!ok) throw std::invalid_argument(std::string("transformer workload: ") + what);
}

}  // namespace

trace::trace generate_transformer_training(transformer_training_params const& p, trace::trace_writer* out)
{
  check(p.layers > 0 && p.hidden > 0 && p.heads > 0 && p.vocab > 0 && p.batch > 0 && p.ffn_multiplier > 0,
        "layers, hidden, heads, vocab, batch and ffn multiplier must be positive");
  check(p.hidden % p.heads == 0, "heads must divide hidden");
  check(p.seq_len > 0 && p.seq_len <= p.seq_len_max, "need 0 < seq_len <= seq_len_max");
  check(p.dtype_bytes == 2 || p.dtype_bytes == 4, "dtype must be 2 bytes (bf16, fp16) or 4 (fp32)");
  check(p.iterations > 0, "iterations must be positive");
  // Every size is a product of these (tokens x width, batch x heads x seq, or seq^2 scores
  // where attention is naive, a weight's in x out, the embeddings): the largest of each kind
  // must fit.
  check(detail::fits_in_largest_tensor({p.ffn_multiplier, p.hidden}) && detail::fits_in_largest_tensor({3, p.hidden}),
        "the largest tensor would exceed 2^50 bytes: lower ffn_multiplier or hidden");
  std::uint64_t const widest_linear = std::max(3 * p.hidden, p.ffn_multiplier * p.hidden);  // qkv or the MLP
  check(detail::fits_in_largest_tensor({p.batch, p.seq_len_max, std::max(widest_linear, p.vocab)}) &&
            detail::fits_in_largest_tensor({p.batch, p.heads, p.seq_len_max,
                                            p.attention == attention_kind::naive ? p.seq_len_max : 1}) &&
            detail::fits_in_largest_tensor({p.hidden, widest_linear}) &&
            detail::fits_in_largest_tensor({p.vocab, p.hidden}) && detail::fits_in_largest_tensor({p.seq_len_max, p.hidden}),
        "the largest tensor would exceed 2^50 bytes: lower batch, seq_len_max, hidden, heads or vocab");
  return training_run(p, out).run();
}

}  // namespace fraglab::gen
