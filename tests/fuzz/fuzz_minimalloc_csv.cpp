// `fraglab plan`'s MiniMalloc CSV reader on any bytes, and, for what it reads, the planner:
// a problem is refused as input_error or planned, and every placement the planner returns
// passes the independent check (policies/offline/validate.hpp) and, written back, reads back
// as the same problem, in either convention of lifetimes.
#include <fraglab/runtime/plan/offline_problem.hpp>
#include "fuzz_input.hpp"
#include <fraglab/policies/offline/planner.hpp>
#include <fraglab/policies/offline/validate.hpp>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  fraglab::fuzz::memory_file file(data, size);
  // The first byte chooses how the upper column counts (odd: inclusive, as for a header that
  // begins with `id`), so that both conventions are fuzzed.
  auto const read_as = size > 0 && (data[0] & 1) ? fraglab::plan::lifetimes::inclusive : fraglab::plan::lifetimes::half_open;
  fraglab::plan::offline_input in;
  try {
    in = fraglab::plan::read_minimalloc_csv(file.path(), read_as);
  } catch (fraglab::input_error const&) {
    return 0;
  }
  if (in.problem.buffers.size() > 64) return 0;  // the search on big inputs is the planner's tests' business
  fraglab::offline::plan_options options;
  options.time_limit_seconds = 0.02;
  fraglab::offline::plan_result const r = fraglab::offline::plan(in.problem, options);
  if (r.fits) {
    if (fraglab::offline::placement_error(in.problem, r.offsets)) fraglab::fuzz::bug("the planner returned an invalid placement");
    if (r.lower_bound > r.height) fraglab::fuzz::bug("a lower bound above the height found");
    // Written back in the convention it was read, the placement reads back as the same problem.
    std::string const written = fraglab::plan::minimalloc_csv(in, r.offsets);
    fraglab::fuzz::memory_file again(reinterpret_cast<std::uint8_t const*>(written.data()), written.size());
    fraglab::plan::offline_input const back = fraglab::plan::read_minimalloc_csv(again.path(), read_as);
    bool same = back.time_origin == in.time_origin && back.ids == in.ids && back.problem.buffers.size() == in.problem.buffers.size();
    for (std::size_t i = 0; same && i < in.problem.buffers.size(); ++i) {
      auto const& a = in.problem.buffers[i];
      auto const& b = back.problem.buffers[i];
      same = a.lower == b.lower && a.upper == b.upper && a.size == b.size && a.alignment == b.alignment;
    }
    if (!same) fraglab::fuzz::bug("a placement written back does not read back as the problem it places");
  }
  return 0;
}
