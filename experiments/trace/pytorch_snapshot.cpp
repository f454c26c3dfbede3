#include "experiments/trace/pytorch_snapshot.hpp"

#include "experiments/pickle/pickle_reader.hpp"
#include "experiments/trace/input_error.hpp"
#include "experiments/trace/trace.hpp"
#include "policies/presets/pytorch_caching.hpp"

#include <algorithm>
#include <map>

namespace fraglab::trace {
namespace {

namespace pt = presets::pytorch;

class snapshot_parser {
 public:
  explicit snapshot_parser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(std::string const& what) const { throw input_error(path_ + ": " + what); }

  pickle::value const& field(pickle::value const& dict, char const* key, char const* where) const
  {
    pickle::value const* v = dict.get(key);
    if (v == nullptr) fail(std::string("expected key '") + key + "' in " + where);
    return *v;
  }

  std::uint64_t number(pickle::value const& dict, char const* key, char const* where) const
  {
    pickle::value const& v = field(dict, key, where);
    if (!v.is_int() || v.as_int() < 0) fail(std::string("expected a non-negative integer for '") + key + "' in " + where);
    return static_cast<std::uint64_t>(v.as_int());
  }

  std::string text(pickle::value const& dict, char const* key, char const* where) const
  {
    pickle::value const& v = field(dict, key, where);
    if (!v.is_text()) fail(std::string("expected a string for '") + key + "' in " + where);
    return v.as_text();
  }

  std::vector<pickle::value_ptr> const& list(pickle::value const& v, char const* what) const
  {
    if (!v.is_list()) fail(std::string("expected a list for ") + what);
    return v.as_list();
  }

  pytorch_snapshot parse()
  {
    pickle::value_ptr root = pickle::parse_file(path_);
    if (!root->is_dict()) fail("expected a dict at the top of a PyTorch memory snapshot");
    pytorch_snapshot s;
    s.name = file_base_name(path_);
    if (pickle::value const* settings = root->get("allocator_settings"); settings != nullptr && settings->is_dict()) {
      if (auto const* e = settings->get("expandable_segments"); e != nullptr && std::holds_alternative<bool>(e->v))
        s.expandable_segments = std::get<bool>(e->v);
      if (auto const* m = settings->get("max_split_size"); m != nullptr && m->is_int()) s.max_split_size = m->as_int();
    }
    auto const& segments = list(field(*root, "segments", "the snapshot"), "'segments'");
    auto const& traces = list(field(*root, "device_traces", "the snapshot"), "'device_traces'");
    for (std::size_t d = 0; d < traces.size(); ++d) s.devices.push_back(parse_device(static_cast<int>(d), segments, *traces[d]));
    return s;
  }

 private:
  struct live_info {
    std::uint64_t block_size;  // 0: not recorded, derive it
    std::uint64_t requested;
    std::uint64_t stream;
  };
  struct segment_info {
    std::uint64_t size;
    std::uint64_t stream;
    bool small;
  };

  device_snapshot parse_device(int device, std::vector<pickle::value_ptr> const& segments, pickle::value const& trace)
  {
    device_snapshot out;
    out.device = device;
    std::map<std::uint64_t, segment_info> segs;
    std::map<std::uint64_t, live_info> live;
    for (auto const& sp : segments) {
      pickle::value const& seg = *sp;
      if (!seg.is_dict()) fail("expected a dict for each segment");
      if (auto const* dv = seg.get("device"); dv != nullptr && dv->is_int() && dv->as_int() != device) continue;
      std::uint64_t const address = number(seg, "address", "a segment");
      std::string const type = text(seg, "segment_type", "a segment");
      if (type != "small" && type != "large") fail("expected segment_type 'small' or 'large', got " + quoted(type));
      std::uint64_t const stream = number(seg, "stream", "a segment");
      segs[address] = {number(seg, "total_size", "a segment"), stream, type == "small"};
      for (auto const& bp : list(field(seg, "blocks", "a segment"), "a segment's 'blocks'")) {
        pickle::value const& b = *bp;
        std::string const state = text(b, "state", "a block");
        if (state == "inactive") continue;
        std::uint64_t const requested = number(b, "requested_size", "a block");
        if (requested == 0) fail("expected a positive 'requested_size' in a live block (PyTorch records no empty blocks)");
        live[number(b, "address", "a block")] = {number(b, "size", "a block"), requested, stream};
      }
    }
    // Events, and the walk back to the start state.
    for (auto const& ep : list(trace, "a device trace")) {
      pickle::value const& e = *ep;
      std::string const action = text(e, "action", "an event");
      snapshot_event ev{};
      if (action == "alloc") ev.op = snapshot_op::alloc;
      else if (action == "free_completed") ev.op = snapshot_op::free;
      else if (action == "segment_alloc") ev.op = snapshot_op::segment_alloc;
      else if (action == "segment_free") ev.op = snapshot_op::segment_free;
      else continue;  // free_requested, snapshot, oom, segment_map/unmap are not decisions to replay
      ev.address = number(e, "addr", "an event");
      ev.size = number(e, "size", "an event");
      if (ev.size == 0) fail("expected a positive 'size' in a '" + action + "' event (PyTorch records no empty blocks)");
      ev.stream = number(e, "stream", "an event");
      out.events.push_back(ev);
    }
    for (auto it = out.events.rbegin(); it != out.events.rend(); ++it) {
      switch (it->op) {
        case snapshot_op::alloc: live.erase(it->address); break;
        case snapshot_op::free: live[it->address] = {0, it->size, it->stream}; break;
        case snapshot_op::segment_alloc: segs.erase(it->address); break;
        case snapshot_op::segment_free: segs[it->address] = {it->size, it->stream, it->size == pt::small_buffer}; break;
      }
    }
    for (auto const& [address, info] : segs) {
      snapshot_segment seg{address, info.size, info.stream, info.small, {}};
      for (auto it = live.lower_bound(address); it != live.end() && it->first < address + info.size; ++it)
        seg.live.push_back({it->first, it->second.block_size, it->second.requested});
      size_unknown_blocks(seg);
      out.initial_segments.push_back(std::move(seg));
    }
    return out;
  }

  // A block whose size was not recorded takes PyTorch's rounded size, and in a large
  // segment also the tail up to the next block when that tail is too small to have been
  // split off (remainders of 1 MiB or less stay with the block).
  void size_unknown_blocks(snapshot_segment& seg) const
  {
    pt::size_rule const round{};
    for (std::size_t i = 0; i < seg.live.size(); ++i) {
      auto& b = seg.live[i];
      if (b.size != 0) continue;
      b.size = *round.round(b.requested);
      std::uint64_t const next = i + 1 < seg.live.size() ? seg.live[i + 1].address : seg.address + seg.size;
      if (b.address + b.size > next) fail("block at " + std::to_string(b.address) + " overlaps the next one in its segment");
      if (!seg.small && next - (b.address + b.size) <= pt::small_size) b.size = next - b.address;
    }
  }

  std::string path_;
};

}  // namespace

pytorch_snapshot read_pytorch_snapshot(std::string const& path) { return snapshot_parser(path).parse(); }

}  // namespace fraglab::trace
