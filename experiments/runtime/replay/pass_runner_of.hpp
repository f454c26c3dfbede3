// pass_runner for a concrete allocator type: the replay loop instantiated for it, so a
// benchmark pays one virtual call per pass and none per event.
#pragma once

#include <fraglab/runtime/replay/pass_runner.hpp>
#include <fraglab/runtime/replay/replay.hpp>

#include <memory>
#include <vector>

namespace fraglab {

template <class Alloc>
class pass_runner_of final : public pass_runner {
 public:
  // `t` must outlive the runner.
  pass_runner_of(std::unique_ptr<Alloc> a, trace::trace const& t, free_by frees) : a_(std::move(a)), t_(t)
  {
    options_.frees = frees;
  }

  pass_timing run(std::uint64_t untimed_prefix) override
  {
    replay_result unused;
    auto const pass = detail::run_pass<false>(*a_, t_, options_, unused, nullptr, slots_, untimed_prefix);
    pass_timing timing;
    timing.events = pass.processed;
    timing.timed_events = pass.processed > untimed_prefix ? pass.processed - untimed_prefix : 0;
    timing.failed = pass.failed;
    timing.allocator_ns = pass.allocator_ns;
    timing.leftover_frees = detail::free_leftovers(*a_, slots_);
    return timing;
  }

 private:
  std::unique_ptr<Alloc> a_;
  trace::trace const& t_;
  replay_options options_;
  std::vector<detail::slot> slots_;
};

template <class Alloc>
std::unique_ptr<pass_runner> make_pass_runner(std::unique_ptr<Alloc> a, trace::trace const& t,
                                              free_by frees = free_by::reference)
{
  return std::make_unique<pass_runner_of<Alloc>>(std::move(a), t, frees);
}

}  // namespace fraglab
