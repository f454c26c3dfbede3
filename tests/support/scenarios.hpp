// Scenarios worked out by hand that several test files share: tests/engine/test_scenarios.cpp
// and the walkthrough of docs/adding-a-policy.md (tests/docs/walkthrough).
#pragma once

#include "support/fixtures.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace fraglab::testing {

// Where the two requests of two_choices() land, as offsets from the pool's base.
using choice = std::pair<std::uintptr_t, std::uintptr_t>;

// A 4096-byte pool at B (sim_base) with quantum 256, after: A=256@B X1=256@B+256
// C=512@B+512 X2=256@B+1024 D=256@B+1280 X3=256@B+1536, then frees of A, C and D (in that
// order). Free: 256@B, 512@B+512, 256@B+1280, 2304@B+1792. Then two requests of 256 bytes.
template <class P>
choice two_choices()
{
  auto a = fixed_pool<P>(4096);
  std::uintptr_t addr[6];
  std::size_t const sizes[6] = {256, 256, 512, 256, 256, 256};
  for (int i = 0; i < 6; ++i) {
    auto got = a->allocate(sizes[i]);
    EXPECT_TRUE(got);
    addr[i] = got.address;
    EXPECT_EQ(addr[i], sim_base + std::uintptr_t{i == 0 ? 0u : i == 1 ? 256u : i == 2 ? 512u : i == 3 ? 1024u : i == 4 ? 1280u : 1536u});
  }
  a->deallocate(addr[0]);
  a->deallocate(addr[2]);
  a->deallocate(addr[4]);
  EXPECT_EQ(a->check_invariants(), "");
  auto first = a->allocate(256);
  auto second = a->allocate(256);
  EXPECT_EQ(a->check_invariants(), "");
  return {first.address - sim_base, second.address - sim_base};
}

}  // namespace fraglab::testing
