// The chunk record's layout (engine/chunk.hpp, detail/chunk_pool.hpp): a TLSF chunk fills
// one cache line and the record pool starts every such record on one, and the in-use flag
// that shares a word with the region pointer never disturbs it.
#include "engine/chunk.hpp"
#include "engine/detail/chunk_pool.hpp"
#include "policies/indexes/segregated_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace fraglab {
namespace {

using tlsf_chunk = basic_chunk<segregated_index>;

static_assert(sizeof(tlsf_chunk) == detail::cache_line, "a segregated-list chunk record no longer fits one cache line");

TEST(ChunkRecords, PoolStartsEveryLineSizedRecordOnACacheLine)
{
  detail::record_pool<tlsf_chunk> pool(16);
  std::vector<tlsf_chunk*> records;
  for (int i = 0; i < 100; ++i) records.push_back(pool.create());  // several blocks
  for (tlsf_chunk* c : records) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % detail::cache_line, 0u);
  for (int i = 0; i < 100; i += 2) pool.destroy(records[i]);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pool.create()) % detail::cache_line, 0u);
  EXPECT_EQ(pool.live(), 100u);
  for (int i = 1; i < 100; i += 2) pool.destroy(records[i]);
}

TEST(ChunkRecords, InUseFlagAndRegionPointerAreIndependent)
{
  tlsf_chunk::region_type a, b;
  tlsf_chunk c;
  EXPECT_EQ(c.region(), nullptr);
  EXPECT_FALSE(c.in_use());
  c.set_region(&a);
  c.set_in_use(true);
  EXPECT_EQ(c.region(), &a);
  EXPECT_TRUE(c.in_use());
  c.set_region(&b);  // a new region pointer keeps the flag
  EXPECT_EQ(c.region(), &b);
  EXPECT_TRUE(c.in_use());
  c.set_in_use(false);
  EXPECT_EQ(c.region(), &b);
  EXPECT_FALSE(c.in_use());
  c.set_in_use(false);
  EXPECT_FALSE(c.in_use());
}

}  // namespace
}  // namespace fraglab
