// docs/adding-a-policy.md, step 2: the fit composed in a whole program, built and run as the
// walkthrough_compose_example test; the lines below are the document's block.
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits/exact_or_worst_fit.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>

using my_policy = fraglab::policy<fraglab::tree_index, fraglab::exact_or_worst_fit>;

int main()
{
  fraglab::allocator<my_policy, fraglab::simulated_backend> a(fraglab::simulated_backend{});
  fraglab::allocation const block = a.allocate(1000);
  a.deallocate(block.block());
  return block && a.check_invariants().empty() ? 0 : 1;
}
