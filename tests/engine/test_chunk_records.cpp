// The chunk record's layout (engine/chunk.hpp, detail/chunk_pool.hpp): a TLSF chunk fills
// one cache line, the record pool starts every such record on one and reuses the record
// handed back last first, the in-use flag that shares a word with the region pointer never
// disturbs it, and a live block's fields and the free index's hook take turns in one storage.
#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/detail/chunk_pool.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>

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

// A take reuses the record handed back last, the one most likely still in cache, and
// carves a new one only when none is waiting.
TEST(ChunkRecords, PoolReusesTheLatestRecordHandedBackFirst)
{
  detail::record_pool<tlsf_chunk> pool(16);
  std::vector<tlsf_chunk*> records;
  for (int i = 0; i < 20; ++i) records.push_back(pool.create());  // two blocks
  for (int i : {3, 17, 11}) pool.destroy(records[i]);
  EXPECT_EQ(pool.live(), 17u);
  EXPECT_EQ(pool.create(), records[11]);
  EXPECT_EQ(pool.create(), records[17]);
  EXPECT_EQ(pool.create(), records[3]);
  tlsf_chunk* fresh = pool.create();
  for (tlsf_chunk* c : records) EXPECT_NE(fresh, c);
  EXPECT_EQ(pool.live(), 21u);
  pool.destroy(fresh);
  for (tlsf_chunk* c : records) pool.destroy(c);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(ChunkRecords, InUseFlagAndRegionPointerAreIndependent)
{
  tlsf_chunk::region_type a, b;
  tlsf_chunk c;
  EXPECT_EQ(c.region(), nullptr);
  EXPECT_FALSE(c.in_use());
  c.set_region(&a);
  c.make_live(100, 7, &a);
  EXPECT_EQ(c.region(), &a);
  EXPECT_TRUE(c.in_use());
  c.set_region(&b);  // a new region pointer keeps the flag
  EXPECT_EQ(c.region(), &b);
  EXPECT_TRUE(c.in_use());
  c.make_free();
  EXPECT_EQ(c.region(), &b);
  EXPECT_FALSE(c.in_use());
}

// A live chunk's requested size, stream and owner share the hook's storage: they must survive
// while live, and the hook must serve an index again once the chunk is free.
TEST(ChunkRecords, LiveFieldsAndTheHookTakeTurnsInOneStorage)
{
  segregated_index::index<tlsf_chunk> ix(segregated_index_params{});
  tlsf_chunk c, d;
  c.address = 0;
  c.size = 256;
  d.address = 256;
  d.size = 512;
  ix.insert(c);
  ix.insert(d);
  ix.erase(c);
  int const owner = 0;
  c.make_live(200, 3, &owner);
  ix.erase(d);  // the index unlinks d without touching c, whose storage now holds `live`
  EXPECT_EQ(c.live.requested, 200u);
  EXPECT_EQ(c.live.stream, 3u);
  EXPECT_EQ(c.live.owner, &owner);
  c.make_free();
  ix.insert(c);
  ix.insert(d);
  EXPECT_EQ(ix.size(), 2u);
  EXPECT_EQ(ix.check(), "");
  ix.erase(c);
  ix.erase(d);
}

}  // namespace
}  // namespace fraglab
