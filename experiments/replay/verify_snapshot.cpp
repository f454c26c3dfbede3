#include "experiments/replay/verify_snapshot.hpp"

#include "backends/recorded_backend.hpp"

#include <sstream>
#include <unordered_map>

namespace fraglab {
namespace {

namespace pt = presets::pytorch;
using alloc_type = allocator<pt::policy, recorded_backend>;

std::string hex(std::uint64_t x)
{
  std::ostringstream o;
  o << "0x" << std::hex << x;
  return o.str();
}

void note(verify_result& r, std::size_t event, std::string what)
{
  if (r.first_mismatches.size() < 10) r.first_mismatches.push_back({event, std::move(what)});
}

void verify_device(trace::device_snapshot const& d, pt::settings const& settings, verify_result& r)
{
  alloc_type a(recorded_backend(pt::min_block), pt::make_config<recorded_backend>(settings));
  std::unordered_map<std::uint64_t, std::uintptr_t> ours;  // trace address of a live block -> our address
  for (auto const& seg : d.initial_segments) {
    std::vector<alloc_type::restored_block> blocks;
    for (auto const& b : seg.live) {
      blocks.push_back({b.address, b.size, b.requested, seg.stream});
      ours[b.address] = b.address;
    }
    a.backend().adopt(seg.size);
    a.restore_region({seg.address, seg.size}, pt::pool_rule::key(seg.stream, seg.small), blocks);
  }
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    trace::snapshot_event const& e = d.events[i];
    switch (e.op) {
      case trace::snapshot_op::alloc: {
        ++r.addresses_total;
        std::uint64_t const matched_before = a.backend().matched();
        std::uint64_t const unexpected_before = a.backend().unexpected() + a.backend().mismatched_size();
        allocation const got = a.allocate(e.size, 1, e.stream);
        if (got.address == e.address) ++r.addresses_matched;
        else note(r, i, "alloc of " + std::to_string(e.size) + " B: PyTorch chose " + hex(e.address) + ", the preset " + hex(got.address));
        r.segments_matched += a.backend().matched() - matched_before;
        if (a.backend().unexpected() + a.backend().mismatched_size() != unexpected_before)
          note(r, i, "the preset asked for a segment PyTorch did not allocate here");
        if (a.backend().pending() != 0) {
          note(r, i, "PyTorch allocated a segment here that the preset did not need");
          a.backend().discard_pending();
        }
        if (got) ours[e.address] = got.address;
        break;
      }
      case trace::snapshot_op::free: {
        auto it = ours.find(e.address);
        if (it == ours.end()) {
          note(r, i, "free of " + hex(e.address) + ", which is not live in the replay");
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
        else note(r, i, "PyTorch released segment " + hex(e.address) + ", which the preset does not hold free");
        break;
    }
  }
  if (a.backend().pending() != 0) note(r, d.events.size(), "segments announced at the end were never requested");
}

}  // namespace

verify_result verify_pytorch_snapshot(trace::pytorch_snapshot const& s, pt::settings const& settings)
{
  verify_result r;
  for (auto const& d : s.devices) verify_device(d, settings, r);
  return r;
}

}  // namespace fraglab
