// Shared by fuzz_policy_ops and fuzz_policy_params: random operations on one allocator, with
// every operation checked. Allocations of any size and alignment (misuse included), frees by
// reference and by address, misuse frees, and releases of free regions. After every operation
// the allocator's own check_invariants() must pass, live blocks must not overlap and must be
// aligned, the live byte count must match what is live, and misuse must be reported and
// change nothing. Any breach aborts with the policy's name and what broke.
//
// Over real memory (the host backend) each new block's first and last byte are written with
// a stamp of its address, and read back when it is freed: under AddressSanitizer a block that
// reaches past the memory its region acquired faults, and one the allocator wrote into while
// it was live (records are kept out of band) fails the read.
//
// The bytes are read in a fixed order, so a corpus input replays the same operations for as
// long as this order stays: change it only with the seeds (tests/fuzz/make_corpus.py).
#pragma once

#include <fraglab/runtime/registry/composition.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace fraglab::fuzz {

[[noreturn]] inline void bug(std::string const& policy, std::string const& what)
{
  std::fprintf(stderr, "fraglab fuzz (%s): %s\n", policy.c_str(), what.c_str());
  std::abort();
}

// Every policy `fraglab policies` names: the presets, then the named compositions. The
// order is part of what a corpus input means (its first choice indexes this list).
inline std::vector<std::string> named_policies()
{
  std::vector<std::string> v;
  for (auto const& p : preset_list()) v.emplace_back(p.name);
  for (auto const& n : named_compositions()) v.emplace_back(n.name);
  return v;
}

namespace detail {

struct live_block {
  std::size_t requested;
  void* record;  // allocation::record, for a free by reference
};

inline std::size_t pick_size(FuzzedDataProvider& in)
{
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return 0;
    case 1: return std::numeric_limits<std::size_t>::max() - in.ConsumeIntegralInRange<std::size_t>(0, 1 << 20);
    case 2: return in.ConsumeIntegralInRange<std::size_t>(1 << 20, std::size_t{1} << 27);
    default: return in.ConsumeIntegralInRange<std::size_t>(1, 1 << 14);
  }
}

inline std::size_t pick_alignment(FuzzedDataProvider& in)
{
  int const k = in.ConsumeIntegralInRange<int>(-2, 14);
  if (k == -2) return 0;
  if (k == -1) return 3 << in.ConsumeIntegralInRange<int>(0, 8);  // not a power of two
  return k < 8 ? 1 : std::size_t{1} << k;                          // mostly the natural alignment
}

inline unsigned char stamp_of(std::uintptr_t address) { return static_cast<unsigned char>(address * 0x9E3779B1u >> 24) | 1; }

}  // namespace detail

enum class memory { simulated, real };

// Up to 2000 operations on `a` from the rest of `in`, then everything still live freed.
inline void run_policy_ops(FuzzedDataProvider& in, std::string const& name, any_allocator& a, memory kind = memory::simulated)
{
  std::map<std::uintptr_t, detail::live_block> live;
  std::vector<block_ref> freed;
  std::size_t live_bytes = 0;
  auto check = [&](char const* after) {
    if (std::string const why = a.check_invariants(); !why.empty()) bug(name, std::string(after) + ": " + why);
    if (a.counters().live_bytes != live_bytes) bug(name, std::string(after) + ": live bytes disagree");
  };
  auto stamp = [&](std::uintptr_t address, std::size_t n) {
    if (kind != memory::real) return;
    auto* const bytes = reinterpret_cast<unsigned char*>(address);
    bytes[0] = bytes[n - 1] = detail::stamp_of(address);
  };
  auto free_live = [&](std::uintptr_t address, detail::live_block const& block, bool by_reference) {
    if (kind == memory::real) {
      auto const* const bytes = reinterpret_cast<unsigned char const*>(address);
      if (bytes[0] != detail::stamp_of(address) || bytes[block.requested - 1] != detail::stamp_of(address))
        bug(name, "a live block's bytes were overwritten");
    }
    block_ref const b{address, block.record};
    if ((by_reference ? a.deallocate(b) : a.deallocate(address)) != free_status::ok) bug(name, "freeing a live block failed");
    freed.push_back(b);
  };

  for (int steps = 0; in.remaining_bytes() > 0 && steps < 2000; ++steps) {
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
      case 0:
      case 1:
      case 2: {
        std::size_t const n = detail::pick_size(in), alignment = detail::pick_alignment(in);
        auto const stream = in.ConsumeIntegralInRange<std::uint64_t>(0, 2);
        allocation const got = a.allocate(n, alignment, stream);
        bool const bad_alignment = alignment == 0 || (alignment & (alignment - 1)) != 0;
        if (bad_alignment && got.status != alloc_status::bad_alignment) bug(name, "a bad alignment was not reported");
        if (!got || n == 0) break;
        if (got.address % alignment != 0) bug(name, "an allocation is misaligned");
        if (got.size < n) bug(name, "a chunk is smaller than its request");
        auto const next = live.lower_bound(got.address);
        if (next != live.end() && next->first < got.address + n) bug(name, "a new block overlaps a live one");
        if (next != live.begin() && std::prev(next)->first + std::prev(next)->second.requested > got.address)
          bug(name, "a new block overlaps a live one");
        live.emplace(got.address, detail::live_block{n, got.record});
        stamp(got.address, n);
        live_bytes += n;
        check("allocate");
        break;
      }
      case 3:
      case 4: {
        if (live.empty()) break;
        auto it = live.begin();
        std::advance(it, in.ConsumeIntegralInRange<std::size_t>(0, live.size() - 1));
        free_live(it->first, it->second, in.ConsumeBool());
        live_bytes -= it->second.requested;
        live.erase(it);
        check("deallocate");
        break;
      }
      case 5: {
        // Misuse: a freed block (unless its address is live again) by address or by its
        // stale reference, an interior pointer, or a wild one.
        block_ref b{in.ConsumeIntegral<std::uintptr_t>(), nullptr};
        int const kind = in.ConsumeIntegralInRange<int>(0, 2);
        if (kind == 0 && !freed.empty()) b = freed[in.ConsumeIntegralInRange<std::size_t>(0, freed.size() - 1)];
        if (kind == 1 && !live.empty() && live.begin()->second.requested > 1) b = {live.begin()->first + 1, nullptr};
        if (b.address == 0 || live.count(b.address) != 0) break;
        if (in.ConsumeBool()) b.record = nullptr;
        auto const before = a.counters();
        if (a.deallocate(b) == free_status::ok) bug(name, "a free of a block that is not live succeeded");
        if (a.counters().live_bytes != before.live_bytes || a.counters().reserved_bytes != before.reserved_bytes)
          bug(name, "a misuse free changed the allocator");
        check("misuse");
        break;
      }
      case 6:
        a.release_free_regions();
        check("release_free_regions");
        break;
    }
  }
  for (auto const& [address, block] : live) free_live(address, block, false);
  live_bytes = 0;
  check("freeing everything");
}

}  // namespace fraglab::fuzz
