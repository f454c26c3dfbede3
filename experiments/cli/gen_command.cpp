// fraglab gen KIND: one table row per workload kind, naming its options with their defaults
// and turning them into the generator's parameters. Options are strings checked here, so
// that a bad value is reported against its option, and the command that made a trace can
// be written into it with every value spelled out.
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>

#include <fraglab/runtime/gen/llm_serving.hpp>
#include <fraglab/runtime/gen/phases_and_random.hpp>
#include <fraglab/runtime/gen/transformer_training.hpp>
#include <fraglab/runtime/trace/write_trace.hpp>

#include <boost/program_options.hpp>

#include <iostream>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab::cli {
namespace {

struct option_spec {
  char const* name;
  char const* default_value;
  char const* help;
};

// The most events gen writes without --unbounded: about 8 GB as text, 4 GB as binary, and
// minutes to write. Past it a workload's counts are almost surely a slip.
constexpr std::uint64_t default_event_limit = 500'000'000;

class option_values {
 public:
  option_values(std::map<std::string, std::string> values, bool unbounded) : values_(std::move(values)), unbounded_(unbounded) {}

  std::string const& text(std::string const& name) const { return values_.at(name); }

  std::uint64_t seed() const { return integer("seed", 0, std::numeric_limits<std::uint64_t>::max()); }

  // A number the workload's shape takes, within [min, max] always.
  std::uint64_t integer(std::string const& name, std::uint64_t min, std::uint64_t max) const
  {
    return count_option(name, text(name), min, max);
  }

  // A count that only costs time and space: at most `max` unless --unbounded.
  std::uint64_t count(std::string const& name, std::uint64_t min, std::uint64_t max) const
  {
    std::uint64_t const v = count_option(name, text(name), min, std::numeric_limits<std::uint64_t>::max());
    if (v > max && !unbounded_)
      throw std::invalid_argument("--" + name + ": at most " + std::to_string(max) + " without --unbounded (a trace that size takes hours and "
                                  "gigabytes), got " + text(name));
    return v;
  }

  template <class Enum>
  Enum choice(std::string const& name, std::vector<std::pair<char const*, Enum>> const& choices) const
  {
    std::string known;
    for (auto const& [spelling, value] : choices) {
      if (text(name) == spelling) return value;
      known += known.empty() ? spelling : std::string(", ") + spelling;
    }
    throw std::invalid_argument("--" + name + ": expected one of " + known + ", got '" + text(name) + "'");
  }

  std::size_t dtype_bytes(std::string const& name) const
  {
    return choice<std::size_t>(name, {{"fp8", 1}, {"bf16", 2}, {"fp16", 2}, {"fp32", 4}});
  }

  bool flag(std::string const& name) const { return choice<bool>(name, {{"false", false}, {"true", true}}); }

 private:
  std::map<std::string, std::string> values_;
  bool unbounded_;
};

// Refuses, part-way, a workload that passes its event limit: its output is discarded whole
// (write_trace writes a temporary), and the message says what to change.
class bounded_writer final : public trace::trace_writer {
 public:
  bounded_writer(trace::trace_writer& out, std::uint64_t limit) : out_(out), limit_(limit) {}
  void write(std::span<trace::event const> events) override
  {
    written_ += events.size();
    if (written_ > limit_)
      throw std::invalid_argument("the workload passes " + std::to_string(limit_) +
                                  " events: lower its counts, or give --unbounded to write it whole");
    out_.write(events);
  }
  void finish(trace::trace const& summary) override { out_.finish(summary); }

 private:
  trace::trace_writer& out_;
  std::uint64_t limit_;
  std::uint64_t written_ = 0;
};

struct workload_kind {
  char const* name;
  char const* summary;
  std::vector<option_spec> options;
  trace::trace (*generate)(option_values const&, trace::trace_writer*);
};

trace::trace phases(option_values const& o, trace::trace_writer* out)
{
  return gen::generate_phases({o.seed(), o.count("phases", 1, 1'000'000), o.count("objects", 1, 100'000'000)}, out);
}

trace::trace random_sizes(option_values const& o, trace::trace_writer* out)
{
  gen::random_params p;
  p.seed = o.seed();
  p.allocations = o.count("allocations", 1, 200'000'000);
  p.mean_lifetime = o.integer("mean-lifetime", 1, std::uint64_t{1} << 40);
  p.min_size_log2 = static_cast<unsigned>(o.integer("min-size-log2", 0, 39));
  p.max_size_log2 = static_cast<unsigned>(o.integer("max-size-log2", 1, 40));
  if (p.min_size_log2 >= p.max_size_log2) throw std::invalid_argument("--min-size-log2 must be below --max-size-log2");
  return gen::generate_random(p, out);
}

// The bounds of a model's shape, the same for the kinds that take one: far past any model
// trained or served, short of sizes that wrap.
constexpr std::uint64_t most_layers = 1024, most_hidden = std::uint64_t{1} << 20, most_heads = 4096, most_vocab = std::uint64_t{1} << 24;

trace::trace transformer(option_values const& o, trace::trace_writer* out)
{
  gen::transformer_training_params p;
  p.seed = o.seed();
  p.layers = o.count("layers", 1, most_layers);
  p.hidden = o.integer("hidden", 1, most_hidden);
  p.heads = o.integer("heads", 1, most_heads);
  p.ffn_multiplier = o.integer("ffn-multiplier", 1, 64);
  p.vocab = o.integer("vocab", 1, most_vocab);
  p.batch = o.count("batch", 1, 1 << 16);
  p.seq_len = o.count("seq-len", 1, std::uint64_t{1} << 22);
  p.seq_dist = o.choice<gen::sequence_length_distribution>(
      "seq-dist", {{"fixed", gen::sequence_length_distribution::fixed},
                   {"uniform", gen::sequence_length_distribution::uniform},
                   {"long-tail", gen::sequence_length_distribution::long_tail}});
  p.seq_len_max = o.text("seq-len-max") == "same" ? p.seq_len : o.count("seq-len-max", 1, std::uint64_t{1} << 22);
  if (p.seq_len_max < p.seq_len) throw std::invalid_argument("--seq-len-max must be at least --seq-len");
  if (p.seq_dist != gen::sequence_length_distribution::fixed && p.seq_len_max == p.seq_len)
    throw std::invalid_argument("--seq-dist " + o.text("seq-dist") + " needs --seq-len-max above --seq-len");
  p.dtype_bytes = o.dtype_bytes("dtype");
  if (p.dtype_bytes == 1) throw std::invalid_argument("--dtype: training takes bf16, fp16 or fp32");
  p.activation_checkpointing = o.flag("checkpointing");
  p.attention = o.choice<gen::attention_kind>("attention", {{"fused", gen::attention_kind::fused},
                                                            {"naive", gen::attention_kind::naive}});
  p.optimizer = o.choice<gen::optimizer_kind>(
      "optimizer", {{"adam", gen::optimizer_kind::adam}, {"momentum", gen::optimizer_kind::momentum},
                    {"sgd", gen::optimizer_kind::sgd}});
  p.iterations = o.count("iterations", 1, 100'000);
  return gen::generate_transformer_training(p, out);
}

trace::trace llm_serving(option_values const& o, trace::trace_writer* out)
{
  gen::llm_serving_params p;
  p.seed = o.seed();
  p.layers = o.count("layers", 1, most_layers);
  p.hidden = o.integer("hidden", 1, most_hidden);
  p.heads = o.integer("heads", 1, most_heads);
  p.kv_heads = o.integer("kv-heads", 1, most_heads);
  p.ffn = o.integer("ffn", 1, std::uint64_t{1} << 22);
  p.vocab = o.integer("vocab", 1, most_vocab);
  p.dtype_bytes = o.dtype_bytes("dtype");
  p.layout = o.choice<gen::kv_cache_layout>("kv-layout", {{"contiguous", gen::kv_cache_layout::contiguous},
                                                          {"paged", gen::kv_cache_layout::paged}});
  p.block_tokens = o.integer("block-tokens", 1, std::uint64_t{1} << 20);
  p.requests = o.count("requests", 1, 10'000'000);
  p.max_batch = o.count("max-batch", 1, 1 << 16);
  p.arrival_percent = static_cast<unsigned>(o.integer("arrival-percent", 1, 99));
  p.prompt_min = o.count("prompt-min", 1, std::uint64_t{1} << 22);
  p.prompt_max = o.count("prompt-max", 1, std::uint64_t{1} << 22);
  p.output_min = o.count("output-min", 1, std::uint64_t{1} << 22);
  p.output_max = o.count("output-max", 1, std::uint64_t{1} << 22);
  return gen::generate_llm_serving(p, out);
}

std::vector<workload_kind> const& workload_kinds()
{
  static std::vector<workload_kind> const kinds{
      {"phases", "Wilson-style phases: ramps, peaks and plateaus of a few dominant sizes",
       {{"phases", "24", "number of phases"}, {"objects", "4000", "mean objects per phase"}},
       phases},
      {"random", "i.i.d. log-uniform sizes and uniform lifetimes (the model Wilson et al. warn misleads)",
       {{"allocations", "100000", "number of allocations"},
        {"mean-lifetime", "1000", "mean lifetime, in allocations"},
        {"min-size-log2", "4", "sizes from 2^this"},
        {"max-size-log2", "14", "sizes below 2^this"}},
       random_sizes},
      {"transformer", "a decoder-only transformer's training loop under PyTorch's autograd (GPT-2 small by default)",
       {{"layers", "12", "transformer blocks"},
        {"hidden", "768", "hidden size"},
        {"heads", "12", "attention heads"},
        {"ffn-multiplier", "4", "MLP width as a multiple of hidden"},
        {"vocab", "50257", "vocabulary size (the output projection is tied to the embedding)"},
        {"batch", "8", "sequences per iteration"},
        {"seq-len", "512", "sequence length, or the shortest when --seq-dist varies it"},
        {"seq-len-max", "same", "the longest sequence length (same: --seq-len)"},
        {"seq-dist", "fixed", "fixed, uniform or long-tail (every octave equally likely)"},
        {"dtype", "bf16", "activations under autocast: bf16, fp16 or fp32 (no autocast)"},
        {"checkpointing", "false", "activation checkpointing of every block: true or false"},
        {"attention", "fused", "fused (FlashAttention) or naive (keeps heads x seq^2 scores)"},
        {"optimizer", "adam", "adam (two moments), momentum (one) or sgd (none)"},
        {"iterations", "4", "training iterations"}},
       transformer},
      {"llm-serving", "an LLM inference server: batched requests with growing KV caches (Llama-3-8B shape by default)",
       {{"layers", "32", "transformer blocks"},
        {"hidden", "4096", "hidden size"},
        {"heads", "32", "attention heads"},
        {"kv-heads", "8", "key/value heads (grouped-query attention)"},
        {"ffn", "14336", "MLP width"},
        {"vocab", "128256", "vocabulary size"},
        {"dtype", "bf16", "fp8, bf16, fp16 or fp32"},
        {"kv-layout", "contiguous", "contiguous (each layer's K and V reallocated longer) or paged (a block per layer)"},
        {"block-tokens", "16", "tokens per KV growth step"},
        {"requests", "100", "requests served"},
        {"max-batch", "32", "requests decoded together at most; the rest queue"},
        {"arrival-percent", "40", "each step, another request arrives with this probability (1-99)"},
        {"prompt-min", "16", "shortest prompt, tokens"},
        {"prompt-max", "2048", "longest prompt, tokens"},
        {"output-min", "16", "shortest output, tokens"},
        {"output-max", "1024", "longest output, tokens"}},
       llm_serving},
  };
  return kinds;
}

std::string kind_names()
{
  std::string names;
  for (auto const& k : workload_kinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

workload_kind const* find_kind(std::string const& name)
{
  for (auto const& k : workload_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace

int gen(std::vector<std::string> const& args)
{
  // The kind decides which options exist, so it is found before the options are parsed:
  // the first word that is neither an option nor an option's value (every option of gen
  // but --help takes one, as `--opt VALUE`, `--opt=VALUE` or `-oVALUE`).
  workload_kind const* kind = nullptr;
  for (std::size_t i = 0; i < args.size() && !kind; ++i) {
    std::string const& a = args[i];
    if (a == "--help" || a == "-h") continue;
    if (!a.empty() && a[0] == '-') {
      bool const value_attached = a.find('=') != std::string::npos || (a.size() > 2 && a[1] != '-');
      if (!value_attached) ++i;
      continue;
    }
    kind = find_kind(a);
    if (!kind) throw std::invalid_argument("unknown workload kind '" + a + "' (known: " + kind_names() + ")");
  }
  po::options_description desc("fraglab gen KIND -o OUT [options]   (KIND: " + kind_names() + ")");
  desc.add_options()                                                                                      //
      ("kind", po::value<std::string>(), "the workload kind")                                             //
      ("output,o", po::value<std::string>(), "trace file to write (format from --to, else the extension: "
                                             ".fbin native binary, .csv RMM CSV, otherwise native text)")  //
      ("to", po::value<std::string>()->default_value(""), "text, binary or rmm-csv")                        //
      ("seed", po::value<std::string>()->default_value("1"), "random seed")                                 //
      ("unbounded", "write a workload of any size: without it, counts that take hours and gigabytes (more than "
                    "500,000,000 events) are refused");
  for (auto const& k : workload_kinds()) {
    if (kind && kind != &k) continue;
    po::options_description group(std::string(k.name) + ": " + k.summary);
    for (auto const& o : k.options) group.add_options()(o.name, po::value<std::string>()->default_value(o.default_value), o.help);
    if (kind) desc.add(group);
    else std::cout << (&k == &workload_kinds().front() ? "" : "\n") << group;
  }
  auto const parsed = parse_command(args, desc, "kind", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!kind) throw std::invalid_argument("no workload kind given (" + kind_names() + ")");
  if (!vm.count("output")) throw std::invalid_argument("no output file given (-o FILE)");
  check_output_options(vm, {"output"});
  std::map<std::string, std::string> values{{"seed", vm["seed"].as<std::string>()}};
  std::string command = std::string("fraglab gen ") + kind->name + " --seed " + values["seed"];
  for (auto const& o : kind->options) {
    values[o.name] = vm[o.name].as<std::string>();
    command += std::string(" --") + o.name + ' ' + values[o.name];
  }
  option_values const options(std::move(values), vm.count("unbounded") != 0);
  std::string const path = vm["output"].as<std::string>();
  trace::trace summary;  // the events go to the file as they are made
  trace::write_trace(path, trace::output_trace_format(path, vm["to"].as<std::string>()), command,
                     [&](trace::trace_writer& out) {
                       if (vm.count("unbounded")) return summary = kind->generate(options, &out);
                       bounded_writer bounded(out, default_event_limit);
                       return summary = kind->generate(options, &bounded);
                     });
  std::cerr << "wrote " << summary.allocs + summary.frees << " events (" << summary.allocs << " allocations) to " << path
            << '\n';
  return 0;
}

}  // namespace fraglab::cli
