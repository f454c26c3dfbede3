// README.md's "In C++" example, built and run as the readme_example test; the lines below are
// the README's block (tests/docs/check_doc_code.py checks them).
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/policy.hpp>

#include <iostream>

using tf_like = fraglab::policy<fraglab::bins_index, fraglab::best_fit>;

int main()
{
  fraglab::allocator<tf_like, fraglab::simulated_backend>::config cfg;
  cfg.size = {.quantum = 256, .min_size = 256};
  cfg.split.ratio = 2.0;
  cfg.growth.kind = fraglab::growth_kind::doubling;
  fraglab::allocator<tf_like, fraglab::simulated_backend> a(fraglab::simulated_backend{}, cfg);
  auto block = a.allocate(1 << 20);  // typed result: block.status, block.address, block.size
  if (!block) return 1;
  a.deallocate(block.block());  // by reference: no address lookup (or by block.address);
                                // misuse is a typed status: double_free, unknown_pointer, ...
  auto s = a.stats();  // live / allocated / reserved bytes, peaks, largest free block, ...
  std::cout << s.allocations << " allocation, " << s.peak_reserved_bytes << " bytes reserved at the peak\n";
  return a.deallocate(block.block()) == fraglab::free_status::double_free ? 0 : 1;
}
