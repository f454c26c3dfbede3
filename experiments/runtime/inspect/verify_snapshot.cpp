#include <fraglab/runtime/inspect/verify_snapshot.hpp>

#include <fraglab/backends/recorded_backend.hpp>
#include <fraglab/runtime/io/input_error.hpp>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace fraglab {
namespace {

namespace pt = presets::pytorch;
using alloc_type = allocator<pt::policy, recorded_backend>;

verify_result verify_device(trace::device_snapshot const& d, pt::settings const& settings)
{
  verify_result r;
  r.device = d.device;
  alloc_type a(recorded_backend(pt::min_block), pt::make_config<recorded_backend>(settings));
  std::unordered_map<std::uint64_t, std::uintptr_t> ours;  // trace address of a live block -> our address
  for (auto const& seg : d.initial_segments) {
    ++r.restored_segments;
    r.restored_blocks += seg.live.size();
    std::vector<alloc_type::restored_block> blocks;
    for (auto const& b : seg.live) {
      blocks.push_back({b.address, b.size, b.requested, seg.stream});
      ours[b.address] = b.address;
    }
    a.backend().adopt(seg.size);
    a.restore_region({seg.address, seg.size}, pt::pool_rule::key(seg.stream, seg.small), blocks, seg.reservation_base);
  }
  for (std::size_t k = 0; k < d.events.size(); ++k) {
    trace::snapshot_event const& e = d.events[k];
    std::size_t const i = e.index;
    switch (e.op) {
      case trace::snapshot_op::alloc: {
        ++r.addresses_total;
        std::uint64_t const matched_before = a.backend().matched();
        std::uint64_t const unexpected_before = a.backend().unexpected() + a.backend().mismatched_size();
        std::uint64_t const maps_before = a.backend().matched_maps(), mismapped_before = a.backend().mismatched_maps();
        allocation const got = a.allocate(e.size, 1, e.stream);
        if (got.address == e.address) ++r.addresses_matched;
        else r.mismatch(i, "alloc of " + std::to_string(e.size) + " B: PyTorch chose " + address_text(e.address) + ", the preset " + address_text(got.address));
        r.segments_matched += a.backend().matched() - matched_before;
        if (a.backend().unexpected() + a.backend().mismatched_size() != unexpected_before)
          r.mismatch(i, "the preset asked for a segment PyTorch did not allocate here");
        if (a.backend().pending() != 0) {
          r.mismatch(i, "PyTorch allocated a segment here that the preset did not need");
          a.backend().discard_pending();
        }
        r.maps_matched += a.backend().matched_maps() - maps_before;
        if (a.backend().mismatched_maps() != mismapped_before) r.mismatch(i, "the preset mapped pages PyTorch did not map here");
        if (a.backend().pending_maps() != 0) {
          r.mismatch(i, "PyTorch mapped pages here that the preset did not need");
          a.backend().discard_pending_maps();
        }
        (void)a.backend().take_released();  // what the preset's own miss path gave back
        if (got) ours[e.address] = got.address;
        break;
      }
      case trace::snapshot_op::free: {
        auto it = ours.find(e.address);
        if (it == ours.end()) {
          r.mismatch(i, "free of " + address_text(e.address) + ", which is not live in the replay");
          break;
        }
        a.deallocate(it->second);
        ours.erase(it);
        break;
      }
      case trace::snapshot_op::segment_alloc:
        ++r.segments_total;
        a.backend().expect(e.address, e.size);
        break;
      case trace::snapshot_op::segment_free:
        ++r.segments_total;
        if (a.release_region(e.address)) ++r.segments_matched;
        else r.mismatch(i, "PyTorch released segment " + address_text(e.address) + ", which the preset does not hold free");
        (void)a.backend().take_released();
        break;
      case trace::snapshot_op::oom: {
        // PyTorch could not serve this (rounded) request with what the device had free
        // after emptying its cache; the preset, given only that much more, must fail too.
        ++r.ooms_total;
        std::size_t const held = a.backend().acquired_bytes();
        a.backend().set_capacity(held + std::min<std::uint64_t>(e.address, ~std::size_t{0} - held));
        allocation const got = a.allocate(e.size, 1, e.stream);
        a.backend().set_capacity(~std::size_t{0});
        (void)a.backend().take_released();
        if (!got) {
          ++r.ooms_matched;
        } else {
          r.mismatch(i, "PyTorch ran out of memory for " + std::to_string(e.size) + " B with " + std::to_string(e.address) +
                         " B free on the device; the preset served it");
          a.deallocate(got.address);
        }
        break;
      }
      case trace::snapshot_op::segment_map:
        ++r.maps_total;
        a.backend().expect_map(e.address, e.size);
        break;
      case trace::snapshot_op::segment_unmap: {
        // PyTorch unmaps only as it empties its cache: a run of unmaps is one empty_cache,
        // whose unmapped ranges the preset's must be.
        std::size_t end = k;
        while (end < d.events.size() && d.events[end].op == trace::snapshot_op::segment_unmap) ++end;
        (void)a.backend().take_released();
        (void)a.release_free_regions();
        auto released = a.backend().take_released();
        for (; k < end; ++k) {
          trace::snapshot_event const& u = d.events[k];
          ++r.maps_total;
          auto const same = std::find_if(released.begin(), released.end(), [&](auto const& g) {
            return g.address == u.address && g.size == u.size;
          });
          if (same != released.end()) {
            ++r.maps_matched;
            released.erase(same);
          } else {
            r.mismatch(u.index, "PyTorch unmapped " + std::to_string(u.size) + " B at " + address_text(u.address) + "; the preset did not");
          }
        }
        --k;
        if (!released.empty()) r.mismatch(i, "the preset gave back memory PyTorch kept when it emptied its cache");
        break;
      }
    }
  }
  if (a.backend().pending() != 0)
    r.mismatch(d.events.empty() ? 0 : d.events.back().index, "segments announced at the end were never requested");
  return r;
}

}  // namespace

pt::settings settings_for_verify(trace::pytorch_snapshot const& s)
{
  trace::recorded_settings const& r = s.settings;
  if (!r.unmodelled.empty()) {
    throw std::invalid_argument(s.name + ": recorded with allocator settings the preset does not model: " + listed(r.unmodelled));
  }
  for (auto const& d : s.devices)
    if (!d.private_pools.empty())
      throw std::invalid_argument(s.name + ": segments of private pools (segment_pool_id " + listed(d.private_pools) +
                                  "), which PyTorch keeps apart from the default pools and the presets do not model yet");
  pt::settings out;
  if (r.max_split_size >= 0) out.max_split_size = static_cast<std::size_t>(r.max_split_size);
  if (r.max_non_split_rounding >= 0) out.max_non_split_rounding = static_cast<std::size_t>(r.max_non_split_rounding);
  out.roundup_power2_divisions = r.roundup_power2_divisions;
  // PyTorch collects garbage only under a memory fraction, which a snapshot does not record:
  // without one (memory_limit unlimited) the threshold is kept and changes nothing, as there.
  out.garbage_collection_threshold = r.garbage_collection_threshold;
  out.expandable_segments = r.expandable_segments;
  // Each expandable segment's reservation (1.125 x the device's memory) must hold what the
  // snapshot shows mapped; the device's size is not recorded.
  for (auto const& d : s.devices)
    for (auto const& seg : d.initial_segments) out.device_memory = std::max<std::size_t>(out.device_memory, seg.size);
  return out;
}

std::vector<verify_result> verify_pytorch_snapshot(trace::pytorch_snapshot const& s, pt::settings const& settings)
{
  std::vector<verify_result> results;
  for (auto const& d : s.devices) results.push_back(verify_device(d, settings));
  return results;
}

}  // namespace fraglab
