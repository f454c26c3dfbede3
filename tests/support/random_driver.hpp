// Drives an allocator with a random alloc/free sequence, checking after every step what
// must hold whatever the policy: blocks are aligned, disjoint and as large as asked; frees
// succeed; failures are normal (typed) failures; check_invariants() passes. Returns the
// addresses handed out (0 for failures), so sequences can be compared across compositions.
//
// Frees go by the reference allocate returned or by address (free_by); by default the
// first half of the steps frees by reference, so the address map is never built, and the
// second half alternates, so that the first free by address builds the map while blocks
// are live and references are then freed through it.
#pragma once

#include <fraglab/engine/results.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace fraglab::testing {

enum class size_shape { small, log_uniform, bimodal, wide };  // wide: log-uniform up to 1 MiB
enum class free_by { reference, address, reference_then_both };

struct sequence_spec {
  std::uint64_t seed = 1;
  int steps = 300;
  size_shape shape = size_shape::log_uniform;
  unsigned aligned_percent = 0;  // share of requests with an alignment above the granule
  unsigned streams = 1;
  unsigned alloc_percent = 55;
  free_by frees = free_by::reference_then_both;
  // Real memory only (the host backend): every block is filled with a byte of its own when
  // allocated and must still hold it when freed. Under AddressSanitizer a chunk that reaches
  // past the memory its region acquired faults; a record written into a live block fails.
  bool write_blocks = false;
};

inline std::string describe(sequence_spec const& s)
{
  return "seed=" + std::to_string(s.seed) + " steps=" + std::to_string(s.steps) +
         " shape=" + std::to_string(static_cast<int>(s.shape)) + " aligned%=" + std::to_string(s.aligned_percent) +
         " streams=" + std::to_string(s.streams) + " free_by=" + std::to_string(static_cast<int>(s.frees));
}

template <class A>
std::vector<std::uintptr_t> drive(A& a, sequence_spec const& s, bool check_every_step = true)
{
  gen::rng r(s.seed);
  struct live_block {
    block_ref block;
    std::size_t size;
    unsigned char fill;
  };
  // Over real memory a block must still hold its fill when it is freed.
  auto free_block = [&](live_block const& b, int step) {
    if (s.write_blocks) {
      auto const* const bytes = reinterpret_cast<unsigned char const*>(b.block.address);
      EXPECT_TRUE(std::all_of(bytes, bytes + b.size, [&](unsigned char x) { return x == b.fill; }))
          << "a live block's bytes changed";
    }
    bool const by_address = s.frees == free_by::address || (s.frees == free_by::reference_then_both && step >= s.steps / 2 && step % 2 == 0);
    return by_address ? a.deallocate(b.block.address) : a.deallocate(b.block);
  };
  std::vector<live_block> live;
  std::map<std::uintptr_t, std::uintptr_t> ranges;  // start -> end of every live block
  std::vector<std::uintptr_t> decisions;
  for (int step = 0; step < s.steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step) + " of " + describe(s));
    if (live.empty() || r.chance(s.alloc_percent)) {
      std::size_t size = 0;
      switch (s.shape) {
        case size_shape::small: size = r.uniform(1, 256); break;
        case size_shape::log_uniform: size = r.log_uniform(0, 16); break;
        case size_shape::bimodal: size = r.chance(80) ? r.uniform(8, 64) : r.uniform(16 * 1024, 96 * 1024); break;
        case size_shape::wide: size = r.log_uniform(0, 20); break;
      }
      std::size_t const alignment = r.chance(s.aligned_percent) ? std::size_t{1} << r.uniform(5, 13) : 1;
      stream_id const stream = s.streams > 1 ? r.uniform(0, s.streams - 1) : 0;
      allocation const got = a.allocate(size, alignment, stream);
      decisions.push_back(got.address);
      if (got) {
        EXPECT_EQ(got.address % alignment, 0u) << "misaligned";
        EXPECT_GE(got.size, size);
        auto next = ranges.lower_bound(got.address);
        if (next != ranges.end()) {
          EXPECT_LE(got.address + got.size, next->first) << "overlaps the next live block";
        }
        if (next != ranges.begin()) {
          EXPECT_LE(std::prev(next)->second, got.address) << "overlaps the previous live block";
        }
        ranges.emplace(got.address, got.address + got.size);
        auto const fill = static_cast<unsigned char>((step * 131 + 7) | 1);
        if (s.write_blocks && got.size != 0) std::memset(got.pointer(), fill, got.size);
        live.push_back({got.block(), got.size, fill});
      } else {
        EXPECT_FALSE(is_misuse(got.status)) << to_string(got.status);
      }
    } else {
      std::size_t const i = r.uniform(0, live.size() - 1);
      EXPECT_EQ(free_block(live[i], step), free_status::ok);
      ranges.erase(live[i].block.address);
      live[i] = live.back();
      live.pop_back();
    }
    if (check_every_step || step + 1 == s.steps) {
      std::string const err = a.check_invariants();
      if (!err.empty()) {
        ADD_FAILURE() << err;
        return decisions;
      }
    }
    if (::testing::Test::HasFailure()) return decisions;
  }
  for (auto const& b : live) EXPECT_EQ(free_block(b, s.steps), free_status::ok);
  EXPECT_EQ(a.check_invariants(), "") << describe(s);
  auto const st = a.stats();
  EXPECT_EQ(st.live_bytes, 0u);
  EXPECT_EQ(st.allocated_bytes, 0u);
  EXPECT_EQ(st.live_chunks, 0u);
  return decisions;
}

}  // namespace fraglab::testing
