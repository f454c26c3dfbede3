// Differential fuzzing of the decisions that indexes promise to share. A fit rule that names
// one chunk (address-ordered first fit and next fit; best fit and worst fit by size, lowest
// address on ties) must choose the same chunk whichever index serves it: the trees and bins
// make, in O(log n), the decisions of the address-ordered list scan that defines the rule
// (docs/architecture.md, "Free-list indexes"). tests/engine/test_equivalence.cpp checks
// this on fixed random sequences with no alignment and one stream; here coverage guides the
// operations and the settings into the corners: alignments, streams, capacity failures,
// region releases, deferred, buddy or no coalescing, headers, size classes, split rules and
// growth.
//
// Every member of a group runs over the simulated backend, which hands out the same
// addresses to the same calls, so that decisions compare address for address. A setting is
// kept only where every member accepts it (a key one index alone reads, such as bin_count,
// is refused by the others). After every operation each allocator's invariants must hold,
// and all must agree on an allocation's status, address and size, on every counter but
// index_steps (what an index examines is what may differ), and on the whole memory map.
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include "param_values.hpp"
#include "policy_ops_driver.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace fraglab;

// A fit rule and the indexes that serve it; the first index is the list scan that defines it.
struct group {
  std::string_view fit;
  std::vector<std::string_view> indexes;
};

std::array<group, 4> const& groups()
{
  static std::array<group, 4> const g{{
      {"first", {"list_ao", "ao_tree"}},
      {"next", {"list_ao", "ao_tree"}},
      {"best", {"list_ao", "tree", "bins", "fine_bins", "seglist"}},
      {"worst", {"list_ao", "tree", "bins", "ao_tree", "seglist"}},
  }};
  return g;
}

// What the members must agree on after every operation: the counters but index_steps, the
// splits and merges, and every chunk of the memory map.
auto observable(allocator_stats const& s)
{
  return std::make_tuple(s.live_bytes, s.allocated_bytes, s.reserved_bytes, s.peak_live_bytes, s.peak_allocated_bytes,
                         s.peak_reserved_bytes, s.allocations, s.deallocations, s.failed_allocations, s.acquisitions,
                         s.releases, s.release_retries, s.total_requested_bytes, s.total_allocated_bytes,
                         s.total_acquired_bytes, s.total_released_bytes, s.peak_live_chunks, s.largest_chunk_allocated,
                         s.live_chunks);
}

// Splits and merges, which stats() derives rather than counters() counting them.
std::pair<std::uint64_t, std::uint64_t> cuts_and_joins(any_allocator const& a)
{
  allocator_stats const s = a.stats();
  return {s.splits, s.merges};
}

std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t, bool, stream_id>> memory_map(any_allocator const& a)
{
  std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t, bool, stream_id>> chunks;
  a.visit_chunks([&](chunk_view const& c) {
    chunks.emplace_back(c.address, c.size, c.in_use ? c.requested : 0, c.in_use, c.in_use ? c.stream : 0);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

class lockstep {
 public:
  lockstep(std::string label, std::vector<std::string> names, std::vector<std::unique_ptr<any_allocator>> members)
      : label_(std::move(label)), names_(std::move(names)), members_(std::move(members))
  {
  }

  void run(FuzzedDataProvider& in)
  {
    for (int steps = 0; in.remaining_bytes() > 0 && steps < 2000; ++steps) {
      switch (in.ConsumeIntegralInRange<int>(0, 5)) {
        case 0:
        case 1:
        case 2: allocate(in); break;
        case 3:
        case 4:
          if (!live_.empty()) {
            auto it = live_.begin();
            std::advance(it, in.ConsumeIntegralInRange<std::size_t>(0, live_.size() - 1));
            free(it, in.ConsumeBool());
          }
          break;
        case 5: {
          std::size_t const first = members_[0]->release_free_regions();
          for (std::size_t i = 1; i < members_.size(); ++i)
            if (members_[i]->release_free_regions() != first) disagree(i, "release_free_regions released other bytes");
          compare("release_free_regions");
          break;
        }
      }
    }
    while (!live_.empty()) free(live_.begin(), false);
  }

 private:
  struct live_block {
    std::vector<void*> records;  // each member's, for a free by reference
  };

  void allocate(FuzzedDataProvider& in)
  {
    std::size_t const n = fuzz::detail::pick_size(in), alignment = fuzz::detail::pick_alignment(in);
    auto const stream = in.ConsumeIntegralInRange<stream_id>(0, 2);
    live_block block;
    allocation first{};
    for (std::size_t i = 0; i < members_.size(); ++i) {
      allocation const got = members_[i]->allocate(n, alignment, stream);
      if (i == 0) first = got;
      else if (got.status != first.status || got.address != first.address || got.size != first.size)
        disagree(i, "allocate(" + std::to_string(n) + ", " + std::to_string(alignment) + ", stream " + std::to_string(stream) +
                        ") gave " + describe(got) + " where " + names_[0] + " gave " + describe(first));
      block.records.push_back(got.record);
    }
    if (first && n != 0) live_.emplace(first.address, std::move(block));
    compare("allocate");
  }

  void free(std::map<std::uintptr_t, live_block>::iterator it, bool by_reference)
  {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      free_status const s = by_reference ? members_[i]->deallocate(block_ref{it->first, it->second.records[i]})
                                         : members_[i]->deallocate(it->first);
      if (s != free_status::ok) disagree(i, "freeing the live block at " + std::to_string(it->first) + " failed");
    }
    live_.erase(it);
    compare("deallocate");
  }

  void compare(char const* after) const
  {
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (std::string const why = members_[i]->check_invariants(); !why.empty()) disagree(i, std::string(after) + ": " + why);
    auto const counters = observable(members_[0]->counters());
    auto const cuts = cuts_and_joins(*members_[0]);
    auto const map = memory_map(*members_[0]);
    for (std::size_t i = 1; i < members_.size(); ++i) {
      if (observable(members_[i]->counters()) != counters) disagree(i, std::string(after) + ": the counters differ");
      if (cuts_and_joins(*members_[i]) != cuts) disagree(i, std::string(after) + ": the splits or merges differ");
      if (memory_map(*members_[i]) != map) disagree(i, std::string(after) + ": the memory maps differ");
    }
  }

  static std::string describe(allocation const& a)
  {
    if (a) return std::to_string(a.address) + " (" + std::to_string(a.size) + " B)";
    return "a failure (status " + std::to_string(static_cast<int>(a.status)) + ")";
  }

  [[noreturn]] void disagree(std::size_t member, std::string const& what) const
  {
    fuzz::bug(label_, names_[member] + " against " + names_[0] + ": " + what);
  }

  std::string label_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<any_allocator>> members_;
  std::map<std::uintptr_t, live_block> live_;
};

// Every member built with `p`, or none where one of them refuses it (with a reason).
std::vector<std::unique_ptr<any_allocator>> build_all(std::vector<std::string> const& specs, param_set const& p,
                                                      backend_choice const& b)
{
  std::vector<std::unique_ptr<any_allocator>> made;
  for (auto const& spec : specs) {
    try {
      made.push_back(make_composition(spec, p, b)->make());
    } catch (std::invalid_argument const& e) {
      if (std::string_view(e.what()).empty()) fuzz::bug(spec, "a refused setting said nothing");
      return {};
    }
  }
  return made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  FuzzedDataProvider in(data, size);
  group const& g = groups()[in.ConsumeIntegralInRange<std::size_t>(0, groups().size() - 1)];
  std::vector<std::string> specs;
  for (auto const index : g.indexes) specs.push_back("compose:index=" + std::string(index) + ",fit=" + std::string(g.fit));
  backend_choice backend;
  backend.kind = "simulated";
  if (in.ConsumeBool()) backend.capacity = in.ConsumeIntegralInRange<std::size_t>(1 << 16, std::size_t{1} << 28);

  std::vector<std::unique_ptr<any_allocator>> members = build_all(specs, {}, backend);
  if (members.empty()) fuzz::bug(specs[0], "a group's members refuse their own defaults");
  std::string label = "fit=" + std::string(g.fit) + " (capacity " + std::to_string(backend.capacity) + ")";
  fuzz::draw_settings(in, label, [&](param_set const& trial, std::string_view, std::string const&) {
    auto made = build_all(specs, trial, backend);
    if (made.empty()) return false;
    members = std::move(made);
    return true;
  });
  lockstep(label, specs, std::move(members)).run(in);
  return 0;
}
