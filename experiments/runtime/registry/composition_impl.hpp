// How a (index, fit) pair becomes a composition: the template every instantiation unit
// expands. Included only by registry/instantiate_*.cpp.
#pragma once

#include <fraglab/backends/any_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/compositions.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>
#include <fraglab/runtime/replay/pass_runner_of.hpp>
#include <fraglab/runtime/replay/replay.hpp>

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace fraglab::registry_detail {

template <class Alloc>
class allocator_adapter final : public any_allocator {
 public:
  template <class... Args>
  explicit allocator_adapter(Args&&... args) : a_(std::forward<Args>(args)...)
  {
  }
  allocation allocate(std::size_t size, std::size_t alignment, stream_id stream) override
  {
    return a_.allocate(size, alignment, stream);
  }
  free_status deallocate(std::uintptr_t address) override { return a_.deallocate(address); }
  free_status deallocate(block_ref block) override { return a_.deallocate(block); }
  std::size_t release_free_regions() override { return a_.release_free_regions(); }
  allocator_stats stats() const override { return a_.stats(); }
  allocator_stats const& counters() const override { return a_.counters(); }
  std::string check_invariants() const override { return a_.check_invariants(); }
  void visit_chunks(std::function<void(chunk_view const&)> const& f) const override { a_.visit_chunks(f); }
  std::size_t backend_granularity() const override { return a_.backend().granularity(); }
  std::uint64_t restore_start(trace::trace const& t, std::vector<block_ref>& live) override
  {
    std::vector<detail::slot> slots;
    std::uint64_t const restored = detail::restore_start(a_, t, slots);
    live.assign(t.slots, block_ref{});
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i].state == detail::slot_state::live) live[i] = slots[i].block;
    return restored;
  }

 private:
  Alloc a_;
};

// Any allocator type built from (backend, config): an engine composition, or a layer over
// one (policies/presets/gmlake.hpp).
template <class Alloc>
class composition_for final : public composition {
  using alloc_type = Alloc;

 public:
  composition_for(std::string name, typename alloc_type::config config, param_set const& p, backend_choice const& b)
      : name_(std::move(name)), config_(std::move(config)), params_(p), backend_(b),
        granularity_(make_backend(backend_, params_).granularity())  // bad backend parameters fail now, not mid-run
  {
  }

  std::string const& name() const override { return name_; }
  backend_choice const& backend() const override { return backend_; }
  std::size_t granularity() const override { return granularity_; }
  param_set const& params() const override { return params_; }

  replay_result replay(trace::trace const& t, replay_options const& o) const override
  {
    auto make = [&] { return std::make_unique<alloc_type>(make_backend(backend_, params_), config_); };
    replay_result r = replay_trace(make, t, o);
    r.policy = name_;
    r.backend = backend_.kind;
    r.granularity = granularity_;
    r.parameters = parameters();
    return r;
  }

  std::unique_ptr<any_allocator> make() const override
  {
    return std::make_unique<allocator_adapter<alloc_type>>(make_backend(backend_, params_), config_);
  }

  std::unique_ptr<pass_runner> runner(trace::trace const& t, free_by frees) const override
  {
    return make_pass_runner(std::make_unique<alloc_type>(make_backend(backend_, params_), config_), t, frees);
  }

 private:
  std::string name_;
  typename alloc_type::config config_;
  param_set params_;
  backend_choice backend_;
  std::size_t granularity_;
};

template <class Policy>
using composition_of = composition_for<allocator<Policy, any_backend>>;

// Coalesce: `coalescing` (the mode read from the parameters) or a `fixed_coalescing`, which
// the parameters must then ask for (make_with_fixed_coalescing below).
template <class Index, class Fit, class Coalesce = coalescing>
std::unique_ptr<composition> make_composition_of(std::string name, param_set const& p, backend_choice const& b)
{
  using P = policy<Index, Fit, threshold_split, Coalesce>;
  check_keys(name, p, generic_parts);
  backend_choice chosen = b;
  if (chosen.kind.empty()) chosen.kind = "heap";
  auto config = config_from_params<allocator<P, any_backend>>(p);
  return std::make_unique<composition_of<P>>(std::move(name), std::move(config), p, chosen);
}

// The composition with the coalescing mode fixed in its type where the parameters ask for
// `Fixed` (every test of the mode in the hot paths then folds away, as in the presets that fix
// it: docs/performance.md, "Structure fixed in the type"), and with the mode read at run time
// otherwise. For the pairs the presets are built on (tlsf, best_fit and first_fit with
// immediate coalescing, buddy with buddy merging): one more instantiation each, so not for
// every pair.
template <class Index, class Fit, coalesce_mode Fixed>
std::unique_ptr<composition> make_with_fixed_coalescing(std::string name, param_set const& p, backend_choice const& b)
{
  if (rule_from_params<coalescing>(p).mode == Fixed)
    return make_composition_of<Index, Fit, fixed_coalescing<Fixed>>(std::move(name), p, b);
  return make_composition_of<Index, Fit>(std::move(name), p, b);
}

template <class Index, class Fit>
std::unique_ptr<composition> make_with_immediate_coalescing(std::string name, param_set const& p, backend_choice const& b)
{
  return make_with_fixed_coalescing<Index, Fit, coalesce_mode::immediate>(std::move(name), p, b);
}

// How the registry builds each pair: the plain composition, unless a translation unit of
// experiments/runtime/registry/ specializes this for a pair it builds otherwise (before its table).
template <class Index, class Fit>
inline constexpr composition_factory factory_for = &make_composition_of<Index, Fit>;

// The registry's rows for a list of policies/compositions.hpp.
template <class... Policies>
constexpr auto instantiations_of(composition_list<Policies...>)
{
  return std::array<instantiation, sizeof...(Policies)>{
      {{Policies::index::name, Policies::fit::name, factory_for<typename Policies::index, typename Policies::fit>}...}};
}

}  // namespace fraglab::registry_detail
