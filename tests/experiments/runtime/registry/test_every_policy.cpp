// The contract every named policy keeps, presets included, driven through the registry as
// users run them: randomized sequences with check_invariants() after every step, misuse
// reported and harmless, and failure under a capacity that leaves the state intact.
#include <fraglab/runtime/registry/composition.hpp>
#include "support/random_driver.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace fraglab::testing {
namespace {

std::vector<std::string> every_policy()
{
  std::vector<std::string> names;
  for (auto const& p : preset_list()) names.emplace_back(p.name);
  for (auto const& n : named_compositions()) names.emplace_back(n.name);
  return names;
}

class EveryPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPolicy, RandomizedSequencesKeepTheInvariants)
{
  auto const c = make_composition(GetParam(), {}, {});
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (size_shape shape : {size_shape::small, size_shape::log_uniform, size_shape::bimodal}) {
      auto a = c->make();
      drive(*a, {.seed = seed, .steps = 400, .shape = shape, .aligned_percent = 10, .streams = 2});
      if (HasFailure()) return;
    }
}

// Over real memory every chunk handed out is written whole and read back when freed: under
// AddressSanitizer (.ci/run's build-asan) a chunk reaching past its region's acquisition
// faults, and a live block the engine wrote into is reported. pytorch_expandable's regions
// are pages mapped in an address reservation, whose unmapped pages fault without ASan too.
TEST_P(EveryPolicy, OverRealMemoryEveryChunkIsWritableAndKeepsItsBytes)
{
  if (GetParam() == std::string_view("gmlake"))
    GTEST_SKIP() << "gmlake maps pages at a second address, which host memory cannot (simulated and cuda_vmm only)";
  auto const c = make_composition(GetParam(), {}, backend_choice{"host"});
  for (size_shape shape : {size_shape::small, size_shape::bimodal, size_shape::wide}) {
    auto a = c->make();
    drive(*a, {.seed = 5, .steps = 300, .shape = shape, .aligned_percent = 10, .streams = 2, .write_blocks = true});
    if (HasFailure()) return;
  }
}

TEST_P(EveryPolicy, MisuseIsReportedAndLeavesTheAllocatorConsistent)
{
  auto a = make_composition(GetParam(), {}, {})->make();
  auto x = a->allocate(100);
  auto y = a->allocate(5000);
  ASSERT_TRUE(x);
  ASSERT_TRUE(y);
  EXPECT_EQ(a->allocate(64, 3).status, alloc_status::bad_alignment);
  EXPECT_EQ(a->allocate(0, 3).status, alloc_status::bad_alignment);  // found by fuzz_policy_ops
  EXPECT_EQ(a->allocate(std::numeric_limits<std::size_t>::max() - 8).status, alloc_status::size_overflow);
  EXPECT_EQ(a->deallocate(y.address + 16), free_status::interior_pointer);
  EXPECT_EQ(a->deallocate(std::uintptr_t{8}), free_status::unknown_pointer);
  EXPECT_EQ(a->deallocate(x.address), free_status::ok);
  EXPECT_EQ(a->deallocate(x.address), free_status::double_free);
  EXPECT_EQ(a->check_invariants(), "");
  EXPECT_EQ(a->stats().live_chunks, 1u);
}

// A reference handed out by one allocator and given to another is refused by the second and
// changes neither. Two allocators over simulated backends hand out the same addresses, so the
// second holds a live block at the very address the reference names: only the record's
// owner tells them apart.
TEST_P(EveryPolicy, AReferenceFromAnotherAllocatorIsRefusedAndChangesNeither)
{
  auto const c = make_composition(GetParam(), {}, backend_choice{"simulated"});
  auto mine = c->make();
  auto theirs = c->make();
  allocation const m = mine->allocate(5000);
  allocation const t = theirs->allocate(5000);
  ASSERT_TRUE(m);
  ASSERT_TRUE(t);
  ASSERT_EQ(m.address, t.address);
  auto const before = mine->stats();
  EXPECT_EQ(mine->deallocate(t.block()), free_status::unknown_pointer);
  EXPECT_EQ(mine->stats().live_chunks, before.live_chunks);
  EXPECT_EQ(mine->stats().misuses, before.misuses + 1);
  EXPECT_EQ(mine->check_invariants(), "");
  EXPECT_EQ(theirs->check_invariants(), "");
  EXPECT_EQ(theirs->deallocate(t.block()), free_status::ok);
  EXPECT_EQ(mine->deallocate(m.block()), free_status::ok);
}

TEST_P(EveryPolicy, FailingForCapacityLeavesStateIntactAndFreeingLetsARetrySucceed)
{
  backend_choice small;
  small.capacity = 64 * 1024 * 1024;
  auto a = make_composition(GetParam(), {}, small)->make();
  std::vector<std::uintptr_t> held;
  allocation got;
  for (int i = 0; i < 10000; ++i) {
    got = a->allocate(1024 * 1024);
    if (!got) break;
    held.push_back(got.address);
  }
  ASSERT_FALSE(got) << "64 MiB never filled";
  EXPECT_FALSE(is_misuse(got.status)) << to_string(got.status);
  ASSERT_FALSE(held.empty());
  EXPECT_EQ(a->check_invariants(), "");
  auto const before = a->stats();
  EXPECT_FALSE(a->allocate(1024 * 1024));  // failing again changes nothing
  EXPECT_EQ(a->stats().live_bytes, before.live_bytes);
  EXPECT_EQ(a->stats().reserved_bytes, before.reserved_bytes);
  for (std::uintptr_t p : held) EXPECT_EQ(a->deallocate(p), free_status::ok);
  EXPECT_TRUE(a->allocate(1024 * 1024));
  EXPECT_EQ(a->check_invariants(), "");
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryPolicy, ::testing::ValuesIn(every_policy()),
                         [](auto const& info) { return info.param; });

}  // namespace
}  // namespace fraglab::testing
