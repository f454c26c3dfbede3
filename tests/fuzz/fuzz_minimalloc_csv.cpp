// `fraglab plan`'s MiniMalloc CSV reader on any bytes, and, for what it reads, the planner:
// a problem is refused as input_error or planned, and every placement the planner returns
// passes the independent check (policies/offline/validate.hpp) and round-trips through the
// CSV writer.
#include "experiments/plan/offline_problem.hpp"
#include "fuzz_input.hpp"
#include "policies/offline/planner.hpp"
#include "policies/offline/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  fraglab::fuzz::memory_file file(data, size);
  fraglab::plan::offline_input in;
  try {
    in = fraglab::plan::read_minimalloc_csv(file.path());
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
    (void)fraglab::plan::minimalloc_csv(in, r.offsets);
  }
  return 0;
}
