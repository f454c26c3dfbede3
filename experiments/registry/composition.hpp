// A runnable composition chosen at run time. Type erasure happens here, once per run:
// replay() runs a loop instantiated for the concrete allocator type, and make() hands out
// an allocator behind a virtual interface for tools and tests that drive it call by call.
#pragma once

#include "engine/chunk.hpp"
#include "engine/results.hpp"
#include "engine/stats.hpp"
#include "experiments/params/param_set.hpp"
#include "experiments/replay/pass_runner.hpp"
#include "experiments/replay/replay_result.hpp"
#include "experiments/trace/trace.hpp"

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
  // experiments/replay/replay.hpp), `live[slot]` the block of each restored slot. Returns
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
  [[nodiscard]] virtual std::string const& name() const = 0;
  [[nodiscard]] virtual replay_result replay(trace::trace const& t, replay_options const& o) const = 0;
  [[nodiscard]] virtual std::unique_ptr<any_allocator> make() const = 0;
  // A fresh allocator behind the replay loop instantiated for its type, for benchmarks,
  // freeing as `frees` says. `t` must outlive the runner.
  [[nodiscard]] virtual std::unique_ptr<pass_runner> runner(trace::trace const& t, free_by frees) const = 0;
};

// Refuses, with std::invalid_argument naming the key and the backends that read it, a
// backend parameter that backend `kind` would ignore: `merging` (simulated only), `device`
// and `device_memory_fraction` (cuda, cuda_async, cuda_vmm), `granularity` (all but
// cuda_vmm, whose pages are the device's). A sweep that set a device's memory fraction over
// the simulated space would otherwise report a limit it never had. make_composition checks
// it; the PyTorch plug-in checks its backend before a device exists.
void check_backend_keys(std::string_view kind, param_set const& p);

// A policy name from `fraglab policies`, or `compose:index=I,fit=F[,KEY=VALUE...]`.
// Parameters: the composition's own defaults, then the spec's, then `user` (--set).
// Throws std::invalid_argument with a message for the user on any unknown name, pair or key.
std::unique_ptr<composition> make_composition(std::string_view spec, param_set const& user, backend_choice const& backend);

struct named_composition {
  std::string_view name;
  std::string_view index;
  std::string_view fit;
  std::string_view defaults;  // KEY=VALUE,... applied before the user's
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
// The index and fit a `compose:` spec names; std::nullopt for a policy name. Throws
// std::invalid_argument, as make_composition does, on a malformed spec.
std::optional<index_fit_pair> composed_pair(std::string_view spec);

}  // namespace fraglab
