// A runnable composition chosen at run time. Type erasure happens here, once per run:
// replay() runs a loop instantiated for the concrete allocator type, and make() hands out
// an allocator behind a virtual interface for tools and tests that drive it call by call.
#pragma once

#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/results.hpp>
#include <fraglab/engine/stats.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/replay/pass_runner.hpp>
#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <string_view>

namespace fraglab {

class any_allocator {
 public:
  virtual ~any_allocator() = default;
  virtual allocation allocate(std::size_t size, std::size_t alignment = 1, stream_id stream = 0) = 0;
  virtual free_status deallocate(std::uintptr_t address) = 0;
  virtual free_status deallocate(block_ref block) = 0;
  virtual std::size_t release_free_regions() = 0;
  [[nodiscard]] virtual allocator_stats stats() const = 0;
  // The running counters alone (cheap: no derived fields).
  [[nodiscard]] virtual allocator_stats const& counters() const = 0;
  [[nodiscard]] virtual std::string check_invariants() const = 0;
  virtual void visit_chunks(std::function<void(chunk_view const&)> const& f) const = 0;
  [[nodiscard]] virtual std::size_t backend_granularity() const = 0;
  // Restores a trace's start segments where this allocator can hold them (restore_start in
  // experiments/runtime/replay/replay.hpp), `live[slot]` the block of each restored slot. Returns
  // the events this stands for; 0 (and nothing restored): drive them.
  virtual std::uint64_t restore_start(trace::trace const& /*t*/, std::vector<block_ref>& /*live*/) { return 0; }
};

struct backend_choice {
  std::string kind;  // simulated, heap, host or a CUDA backend; empty: the policy's own default
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
};

class composition {
 public:
  virtual ~composition() = default;
  // The rows' name: the spec, or its @LABEL.
  [[nodiscard]] virtual std::string const& name() const = 0;
  // The backend it runs on (its kind resolved from the policy's default) and the bytes
  // every acquisition rounds up to.
  [[nodiscard]] virtual backend_choice const& backend() const = 0;
  [[nodiscard]] virtual std::size_t granularity() const = 0;
  // The parameters it was built with: defaults, the spec's and the user's.
  [[nodiscard]] virtual param_set const& params() const = 0;
  // KEY=VALUE, space-separated, of every parameter the policy and its backend read, as it
  // runs (granularity aside): what a results row records of its configuration.
  [[nodiscard]] std::string const& parameters() const noexcept { return parameters_; }
  [[nodiscard]] virtual replay_result replay(trace::trace const& t, replay_options const& o) const = 0;
  [[nodiscard]] virtual std::unique_ptr<any_allocator> make() const = 0;
  // A fresh allocator behind the replay loop instantiated for its type, for benchmarks,
  // freeing as `frees` says. `t` must outlive the runner.
  [[nodiscard]] virtual std::unique_ptr<pass_runner> runner(trace::trace const& t, free_by frees) const = 0;

 private:
  friend std::unique_ptr<composition> make_composition(std::string_view, param_set const&, backend_choice const&);
  std::string parameters_;
};

// Refuses, with std::invalid_argument naming the key and the backends that read it, a
// backend parameter that backend `kind` would ignore: `merging` (simulated only), `device`
// and `device_memory_fraction` (cuda, cuda_async, cuda_vmm), `granularity` (all but
// cuda_vmm, whose pages are the device's). A sweep that set a device's memory fraction over
// the simulated space would otherwise report a limit it never had. make_composition checks
// it; the PyTorch plug-in checks its backend before a device exists.
void check_backend_keys(std::string_view kind, param_set const& p);
// Whether backend `kind` reads key `key` of the backend part (every other key: true).
bool backend_reads(std::string_view kind, std::string_view key);

// A policy spec (policy_spec.hpp): a name from `fraglab policies`, with its own KEY=VALUEs
// and label, or `compose:index=I,fit=F[,KEY=VALUE...]`. Parameters: the policy's own
// defaults, then the spec's and `user`'s (--set), which may not name one key twice. Throws
// std::invalid_argument with a message for the user on any unknown name, pair or key, and on
// a key the policy does not read.
std::unique_ptr<composition> make_composition(std::string_view spec, param_set const& user, backend_choice const& backend);

struct named_composition {
  std::string_view name;
  std::string_view index;
  std::string_view fit;
  // Its defaults where they are not the parameter table's, applied before the user's: those of
  // the preset's C++ config (registry_detail::preset_defaults); null where it has none.
  param_set (*defaults)() = nullptr;
  std::string_view description;
};
std::span<named_composition const> named_compositions();

struct preset_description {
  std::string_view name;
  std::string_view description;
};
// Presets that reproduce real allocators (policies/presets/).
std::vector<preset_description> preset_list();

struct index_fit_pair {
  std::string_view index;
  std::string_view fit;
};
std::vector<index_fit_pair> composable_pairs();

struct composition_parts {
  std::string index, fit;
};
// The index and fit a composition (named or compose:) is built on; std::nullopt for a
// preset. Throws std::invalid_argument, as make_composition does, on a bad spec.
std::optional<composition_parts> parts_of(std::string_view spec);

// Every key the policy of `spec` reads (its backend's included): --set and --vary apply to
// the policies that read their key.
std::vector<std::string_view> parameters_read(std::string_view spec);
// `user` less the keys the policy of `spec` does not read.
param_set scoped_parameters(std::string_view spec, param_set const& user);

// What `fraglab policies NAME` prints.
struct policy_summary {
  std::string name;
  std::string description;
  std::string parts;  // "index I, fit F", or where a preset's rules are written
  std::vector<std::string_view> keys;  // every key it reads (make it to see their values)
};
policy_summary describe_policy(std::string_view spec);

}  // namespace fraglab
