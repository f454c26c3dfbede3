#include <fraglab/benchmarks/subjects.hpp>

#include <fraglab/benchmarks/bump_allocator.hpp>
#include <fraglab/benchmarks/system_malloc.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/replay/pass_runner_of.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

namespace fraglab::bench {

subject policy_subject(std::string const& name, std::string const& backend, free_by frees)
{
  std::shared_ptr<composition const> c = make_composition(name, {}, backend_choice{backend});
  // Policies defined as a scan: the classic lists, and seg_best, whose exact best fit scans
  // its size class's list (4.8 us/op at 1e5 live blocks in the steady pattern; its set-up
  // alone would take hours at 1e6), however the spec names them.
  std::optional<composition_parts> const parts = parts_of(name);
  bool const scans = parts && (parts->index.starts_with("list_") || (parts->index == "seglist" && parts->fit == "best"));
  return {frees == free_by::address ? name + "@address" : name, [c, frees](trace::trace const& t) { return c->runner(t, frees); },
          scans};
}

subject malloc_subject()
{
  return {serving_malloc(), [](trace::trace const& t) { return make_pass_runner(std::make_unique<system_malloc>(), t); }};
}

subject floor_subject()
{
  return {"bump", [](trace::trace const& t) { return make_pass_runner(std::make_unique<bump_allocator>(), t); }};
}

trace::trace load_in_memory(std::string const& path)
{
  trace::trace t = trace::read_trace(path);
  if (t.streamed()) {
    t.events.reserve(t.streamed_events);
    trace::for_each_event(t, [&](trace::event const& e) { t.events.push_back(e); });
    t.streamed_from.clear();
    t.streamed_events = 0;
  }
  t.name = t.name.substr(0, t.name.find('.'));
  return t;
}

}  // namespace fraglab::bench
