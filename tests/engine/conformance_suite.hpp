// The contract every composition keeps: a type-parameterised suite, instantiated for each
// (index, fit) pair by test_compositions_trees.cpp and test_compositions_lists.cpp (one
// translation unit each, so that the build compiles the halves in parallel).
#pragma once

#include "support/compositions.hpp"
#include "support/fixtures.hpp"
#include "support/random_driver.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace fraglab::testing {

template <class P>
class Conformance : public ::testing::Test {};
TYPED_TEST_SUITE_P(Conformance);

TYPED_TEST_P(Conformance, ZeroByteRequestReturnsNullAndChangesNothing)
{
  auto a = fixed_pool<TypeParam>(64 * KiB);
  auto got = a->allocate(0);
  EXPECT_TRUE(got);
  EXPECT_EQ(got.address, 0u);
  EXPECT_EQ(a->stats().allocations, 0u);
  EXPECT_EQ(a->stats().reserved_bytes, 0u);
  EXPECT_EQ(a->deallocate(std::uintptr_t{0}), free_status::ok);  // like free(NULL)
}

TYPED_TEST_P(Conformance, StatsAccountForRequestsChunksAndRegions)
{
  auto a = fixed_pool<TypeParam>(64 * KiB);
  auto x = a->allocate(100);
  auto y = a->allocate(1000);
  auto s = a->stats();
  EXPECT_EQ(s.live_bytes, 1100u);
  EXPECT_EQ(s.allocated_bytes, 256u + 1024u);
  EXPECT_EQ(s.reserved_bytes, 64 * KiB);
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.live_chunks, 2u);
  a->deallocate(x.address);
  s = a->stats();
  EXPECT_EQ(s.live_bytes, 1000u);
  EXPECT_EQ(s.peak_live_bytes, 1100u);
  EXPECT_EQ(s.deallocations, 1u);
  EXPECT_EQ(s.largest_free_bytes + 256u + 1024u, 64 * KiB) << "everything beyond x and y is one free chunk";
  a->deallocate(y.address);
  EXPECT_EQ(a->stats().largest_free_bytes, 64 * KiB);
  EXPECT_EQ(a->stats().fragmentation(), 0.0);
}

TYPED_TEST_P(Conformance, SameSequenceSameAddresses)
{
  sequence_spec s{.seed = 7, .steps = 400, .aligned_percent = 10};
  auto a = fixed_pool<TypeParam>(4 * MiB);
  auto b = fixed_pool<TypeParam>(4 * MiB);
  EXPECT_EQ(drive(*a, s, false), drive(*b, s, false));
}

TYPED_TEST_P(Conformance, MisuseIsReportedAndChangesNothing)
{
  auto a = fixed_pool<TypeParam>(64 * KiB);
  auto x = a->allocate(1000);
  auto y = a->allocate(1000);
  auto before = layout(*a);
  EXPECT_EQ(a->allocate(10, 3).status, alloc_status::bad_alignment);
  EXPECT_EQ(a->allocate(10, 0).status, alloc_status::bad_alignment);
  EXPECT_EQ(a->allocate(std::numeric_limits<std::size_t>::max()).status, alloc_status::size_overflow);
  EXPECT_EQ(a->allocate(std::numeric_limits<std::size_t>::max() - 200).status, alloc_status::size_overflow);
  // Rounding fits, but padding for the alignment overflows.
  EXPECT_EQ(a->allocate(std::numeric_limits<std::size_t>::max() - 5000, std::size_t{1} << 63).status,
            alloc_status::size_overflow);
  // An absurd but well-formed request is a normal failure, not misuse.
  EXPECT_EQ(a->allocate(100, std::size_t{1} << 63).status, alloc_status::no_growth);
  EXPECT_EQ(a->deallocate(x.address + 256), free_status::interior_pointer);
  EXPECT_EQ(a->deallocate(std::uintptr_t{12345}), free_status::unknown_pointer);
  EXPECT_EQ(a->deallocate(x.address), free_status::ok);
  EXPECT_EQ(a->deallocate(x.address), free_status::double_free);
  EXPECT_EQ(a->stats().misuses, 8u);
  EXPECT_EQ(a->check_invariants(), "");
  EXPECT_EQ(a->deallocate(y.address), free_status::ok);
  EXPECT_EQ(a->deallocate(y.address), free_status::double_free);
  EXPECT_EQ(a->check_invariants(), "");
  (void)before;
}

TYPED_TEST_P(Conformance, FailureUnderAFixedPoolLeavesStateIntact)
{
  auto a = fixed_pool<TypeParam>(8 * KiB);
  std::vector<std::uintptr_t> held;
  for (;;) {
    auto got = a->allocate(1024);
    if (!got) {
      EXPECT_EQ(got.status, alloc_status::no_growth);
      break;
    }
    held.push_back(got.address);
  }
  EXPECT_EQ(held.size(), 8u);
  auto before = layout(*a);
  EXPECT_FALSE(a->allocate(1));
  EXPECT_EQ(layout(*a), before);
  EXPECT_EQ(a->check_invariants(), "");
  a->deallocate(held[3]);
  auto retry = a->allocate(1024);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry.address, held[3]);
}

TYPED_TEST_P(Conformance, FreeingEverythingCoalescesEachRegionToOneChunk)
{
  using A = alloc_t<TypeParam>;
  typename A::config c;
  c.growth.kind = growth_kind::doubling;
  c.growth.initial = 64 * KiB;
  A a(simulated_backend{}, c);
  drive(a, sequence_spec{.seed = 3, .steps = 500}, false);
  auto s = a.stats();
  EXPECT_EQ(s.free_chunks, s.regions);
  EXPECT_EQ(a.release_free_regions(), s.reserved_bytes);
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  EXPECT_EQ(a.backend().acquired_bytes(), 0u);
  EXPECT_EQ(a.check_invariants(), "");
}

TYPED_TEST_P(Conformance, FreeingByReferenceDecidesAsFreeingByAddress)
{
  sequence_spec s{.seed = 11, .steps = 600, .aligned_percent = 10, .frees = free_by::reference};
  auto by_reference = fixed_pool<TypeParam>(4 * MiB);
  auto by_address = fixed_pool<TypeParam>(4 * MiB);
  auto const decided = drive(*by_reference, s, false);
  s.frees = free_by::address;
  EXPECT_EQ(decided, drive(*by_address, s, false));
  EXPECT_EQ(layout(*by_reference), layout(*by_address));
  EXPECT_EQ(by_reference->stats().deallocations, by_address->stats().deallocations);
}

TYPED_TEST_P(Conformance, StaleReferencesAreReportedAndChangeNothing)
{
  auto a = fixed_pool<TypeParam>(64 * KiB);
  auto x = a->allocate(1000);
  auto y = a->allocate(1000);
  auto z = a->allocate(1000);
  EXPECT_EQ(a->deallocate(x.block()), free_status::ok);
  auto const before = layout(*a);
  EXPECT_EQ(a->deallocate(x.block()), free_status::double_free);                              // freed already
  EXPECT_EQ(a->deallocate(block_ref{y.address + 256, y.record}), free_status::double_free);  // y's record, not y's address
  EXPECT_EQ(a->deallocate(block_ref{z.address, y.record}), free_status::double_free);        // z's address, y's record
  EXPECT_EQ(layout(*a), before);
  EXPECT_EQ(a->stats().misuses, 3u);
  EXPECT_EQ(a->check_invariants(), "");
  // The first free by address builds the address map from the live blocks (y and z); from
  // then on references are checked against it.
  EXPECT_EQ(a->deallocate(y.address), free_status::ok);
  EXPECT_EQ(a->check_invariants(), "");
  auto const after_y = layout(*a);
  EXPECT_EQ(a->deallocate(y.block()), free_status::double_free);
  EXPECT_EQ(a->deallocate(block_ref{z.address, y.record}), free_status::double_free);
  EXPECT_EQ(layout(*a), after_y);
  EXPECT_EQ(a->deallocate(z.block()), free_status::ok);
  EXPECT_EQ(a->deallocate(z.address), free_status::double_free);
  auto w = a->allocate(1000);
  EXPECT_EQ(a->deallocate(block_ref{w.address}), free_status::ok) << "a reference without a record is freed by its address";
  EXPECT_EQ(a->stats().misuses, 6u);
  EXPECT_EQ(a->stats().live_chunks, 0u);
  EXPECT_EQ(a->check_invariants(), "");
}

REGISTER_TYPED_TEST_SUITE_P(Conformance,
                            ZeroByteRequestReturnsNullAndChangesNothing,
                            StatsAccountForRequestsChunksAndRegions,
                            SameSequenceSameAddresses,
                            MisuseIsReportedAndChangesNothing,
                            FailureUnderAFixedPoolLeavesStateIntact,
                            FreeingEverythingCoalescesEachRegionToOneChunk,
                            FreeingByReferenceDecidesAsFreeingByAddress,
                            StaleReferencesAreReportedAndChangeNothing);

}  // namespace fraglab::testing
