#include <fraglab/runtime/trace/read_trace.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>
#include <fraglab/runtime/trace/native_binary.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include <fraglab/runtime/trace/rmm_csv.hpp>
#include <fraglab/runtime/trace/tf_bfc_log.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace fraglab::trace {

// How far into a file detection looks for TF's BFC lines.
constexpr std::size_t tf_log_detection_window = std::size_t{1} << 20;

std::string_view to_string(trace_format f) noexcept
{
  switch (f) {
    case trace_format::native_text: return "native text";
    case trace_format::native_binary: return "native binary";
    case trace_format::rmm_csv: return "RMM logging CSV";
    case trace_format::pytorch_snapshot: return "PyTorch memory snapshot";
    case trace_format::tf_bfc_log: return "TensorFlow BFC log";
  }
  return "?";
}

trace_format detect_format(std::string const& path)
{
  std::ifstream in = open_input(path, "a trace file", std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof head);
  std::string_view const h(head, static_cast<std::size_t>(in.gcount()));
  // Every format has at least a header or one event: an empty file is a capture that
  // failed, not a trace with nothing in it.
  if (h.empty())
    throw input_error(path + ":1: empty file: expected a trace (native text, native binary, RMM CSV or a PyTorch snapshot)");
  if (has_native_binary_magic(h)) return trace_format::native_binary;
  if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x80 && static_cast<unsigned char>(h[1]) >= 2)
    return trace_format::pytorch_snapshot;
  if (without_utf8_bom(h).substr(0, 18) == "Thread,Time,Action" || without_utf8_bom(h).substr(0, 24) == R"("Thread","Time","Action")")
    return trace_format::rmm_csv;
  // TF's log starts with whatever the program and TF printed before the allocator's first
  // line: look further than the other formats' headers, in the same stream.
  {
    std::string text(h);
    text.resize(tf_log_detection_window);
    in.read(text.data() + h.size(), static_cast<std::streamsize>(text.size() - h.size()));
    text.resize(h.size() + static_cast<std::size_t>(in.gcount()));
    if (looks_like_tf_bfc_log(text)) return trace_format::tf_bfc_log;
  }
  // Both text formats are lines of printable characters; a control byte other than white
  // space means a file of some other binary format, which the text reader would quote.
  for (char const c : h)
    if (auto const u = static_cast<unsigned char>(c); u < 0x20 && (u < '\t' || u > '\r'))
      throw input_error(path + ": binary data, not a trace (native text, native binary, RMM CSV or a PyTorch snapshot); it starts " +
                        quoted(h.substr(0, 16)));
  return trace_format::native_text;
}

namespace {

// Which segments are cached with no live block, as the recording goes: the evidence that
// tells an empty_cache() from the allocator's own releases.
class segment_occupancy {
 public:
  explicit segment_occupancy(device_snapshot const& d)
  {
    for (auto const& seg : d.initial_segments) {
      segments_[seg.address] = {seg.size, seg.live.size()};
      if (seg.live.empty()) ++idle_;
      for (auto const& b : seg.live) segment_of_[b.address] = seg.address;
    }
  }

  void alloc(std::uint64_t address)
  {
    auto it = segments_.upper_bound(address);
    if (it == segments_.begin()) return;
    --it;
    if (address - it->first >= it->second.size) return;
    if (it->second.live++ == 0) --idle_;
    segment_of_[address] = it->first;
  }

  void free(std::uint64_t address)
  {
    auto const block = segment_of_.find(address);
    if (block == segment_of_.end()) return;
    if (auto const seg = segments_.find(block->second); seg != segments_.end() && seg->second.live > 0)
      if (--seg->second.live == 0) ++idle_;
    segment_of_.erase(block);
  }

  void add(std::uint64_t address, std::uint64_t size)
  {
    remove(address);
    segments_[address] = {size, 0};
    ++idle_;
  }

  void remove(std::uint64_t address)
  {
    auto const it = segments_.find(address);
    if (it == segments_.end()) return;
    if (it->second.live == 0) --idle_;
    segments_.erase(it);
  }

  [[nodiscard]] std::size_t idle() const noexcept { return idle_; }

 private:
  struct occupancy {
    std::uint64_t size;
    std::size_t live;
  };
  std::map<std::uint64_t, occupancy> segments_;
  std::unordered_map<std::uint64_t, std::uint64_t> segment_of_;  // live block -> its segment
  std::size_t idle_ = 0;  // segments without a live block, kept as they change: a release run costs no scan
};

trace device_trace(device_snapshot const& d, std::string name)
{
  trace t;
  t.name = std::move(name);
  t.device = d.device;
  t.recorded_failures = d.recorded_ooms;
  for (auto const& [action, count] : d.unknown_actions)
    t.notes.push_back(std::to_string(count) + " entries of action '" + action + "', which this fraglab does not know, left out");
  std::unordered_map<std::uint64_t, std::uint32_t> slots;
  auto slot = [&](std::uint64_t address) {
    return slots.try_emplace(address, static_cast<std::uint32_t>(slots.size())).first->second;
  };
  t.sites = d.sites;
  // Sized once: a trace of tens of millions of events is not grown by copying.
  std::size_t start_blocks = 0;
  for (auto const& seg : d.initial_segments) start_blocks += seg.live.size();
  t.events.reserve(start_blocks + d.events.size());
  if (!t.sites.empty()) t.event_sites.reserve(start_blocks + d.events.size());
  // Each event with the call site of the block it allocates or frees, where frames were recorded.
  auto const add = [&](event const& e, std::uint32_t site) {
    t.events.push_back(e);
    if (!t.sites.empty()) t.event_sites.push_back(site);
  };
  for (auto const& seg : d.initial_segments) {
    start_segment& start = t.start_segments.emplace_back(start_segment{seg.size, seg.stream, seg.small, {}});
    t.recorded_segments.push_back({seg.address, seg.size});
    for (auto const& b : seg.live) {
      add({op::alloc, slot(b.address), b.requested, 1, seg.stream}, b.site);
      ++t.allocs;
      start.live.push_back({b.address - seg.address, b.size, b.requested, t.events.back().slot});
    }
  }
  t.start_events = t.events.size();
  segment_occupancy segments(d);
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    snapshot_event const& e = d.events[i];
    switch (e.op) {
      case snapshot_op::alloc:
        add({op::alloc, slot(e.address), e.size, 1, e.stream}, e.site);
        ++t.allocs;
        segments.alloc(e.address);
        break;
      case snapshot_op::free:
        add({op::free, slot(e.address), 0, 1, e.stream}, e.site);
        ++t.frees;
        segments.free(e.address);
        break;
      case snapshot_op::segment_alloc:
        segments.add(e.address, e.size);
        t.recorded_segments.push_back({e.address, e.size});
        break;
      case snapshot_op::segment_map: break;  // an expandable segment grew: the allocator's decision
      case snapshot_op::oom: t.failures.push_back({t.events.size(), e.size, e.stream, e.address, e.index}); break;
      case snapshot_op::segment_unmap:
      case snapshot_op::segment_free: {
        // A run of segment_free events that gives back every cached segment without a live
        // block is empty_cache() (or PyTorch's release of everything before an OOM): the
        // program's doing, replayed under every policy. A run that keeps some is the
        // allocator's own choice (oversize release, garbage collection), which a preset
        // makes for itself. Pages unmapped from an expandable segment are always the cache
        // given back: PyTorch unmaps only as it releases the cache (its oversize release
        // passes them over).
        std::size_t const idle = segments.idle();
        std::size_t run = 0, freed = 0;
        bool unmapped = false;
        for (; i + run < d.events.size(); ++run) {
          snapshot_event const& f = d.events[i + run];
          if (f.op == snapshot_op::segment_unmap) {
            unmapped = true;
          } else if (f.op == snapshot_op::segment_free) {
            ++freed;
            segments.remove(f.address);
          } else {
            break;
          }
        }
        i += run - 1;
        if (unmapped || freed == idle) {
          add({op::release, 0}, 0);
          ++t.releases;
        }
        break;
      }
    }
  }
  t.slots = slots.size();
  give_releases_a_slot(t);
  return t;
}

std::string non_default_settings(recorded_settings const& r)
{
  std::string out;
  auto add = [&](std::string const& item) { out += (out.empty() ? "" : ", ") + item; };
  if (r.max_split_size >= 0) add("max_split_size=" + std::to_string(r.max_split_size));
  if (r.max_non_split_rounding >= 0) add("max_non_split_rounding=" + std::to_string(r.max_non_split_rounding));
  for (std::size_t k = 0; k < r.roundup_power2_divisions.size(); ++k)
    if (r.roundup_power2_divisions[k] > 1)
      add("roundup_power2_divisions[" + std::to_string(std::size_t{1} << k) + " MiB]=" + std::to_string(r.roundup_power2_divisions[k]));
  if (r.garbage_collection_threshold > 0.0) add("garbage_collection_threshold=" + std::to_string(r.garbage_collection_threshold));
  if (r.expandable_segments) add("expandable_segments=True");
  for (auto const& u : r.unmodelled) add(u);
  return out;
}

// The settings as the PyTorch presets' parameters, those they model.
std::vector<std::pair<std::string, std::string>> preset_parameters(recorded_settings const& r)
{
  std::vector<std::pair<std::string, std::string>> out;
  if (r.max_split_size >= 0 && r.max_split_size % (1 << 20) == 0)
    out.emplace_back("max_split_size_mb", std::to_string(r.max_split_size >> 20));
  if (r.max_non_split_rounding >= 0) out.emplace_back("max_non_split_rounding_mb", std::to_string(r.max_non_split_rounding >> 20));
  if (std::any_of(r.roundup_power2_divisions.begin(), r.roundup_power2_divisions.end(), [](std::size_t d) { return d != 0; })) {
    std::string list;
    for (std::size_t k = 0; k < r.roundup_power2_divisions.size(); ++k)
      list.append(k == 0 ? "[" : ",").append(std::to_string(std::size_t{1} << k)).append(":").append(std::to_string(r.roundup_power2_divisions[k]));
    out.emplace_back("roundup_power2_divisions", list + "]");
  }
  if (r.garbage_collection_threshold > 0.0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", r.garbage_collection_threshold);
    out.emplace_back("garbage_collection_threshold", buf);
  }
  return out;
}

}  // namespace

std::vector<trace> snapshot_traces(pytorch_snapshot const& s)
{
  std::vector<trace> traces;
  for (auto const& d : s.devices) {
    traces.push_back(device_trace(d, device_label(s, d.device)));
    traces.back().recorded_settings = non_default_settings(s.settings);
    traces.back().recorded_parameters = preset_parameters(s.settings);
    traces.back().recorded_expandable = s.settings.expandable_segments;
    traces.back().recorded_unmodelled = s.settings.unmodelled;
    traces.back().private_pools = d.private_pools;
    if (!d.private_pools.empty())
      traces.back().notes.push_back("segments of private pools (segment_pool_id " + listed(d.private_pools) +
                                    "), which PyTorch keeps apart from the default pools and no preset models yet: replays refuse it");
    // An expandable segment's start is a mapped part of a reservation, not a segment to restore.
    if (s.settings.expandable_segments) {
      traces.back().start_segments.clear();
      traces.back().recorded_segments.clear();  // mappings, not segments of their own
    }
  }
  return traces;
}

namespace {

std::vector<trace> read_any_format(std::string const& path)
{
  std::vector<trace> traces;
  trace_format const format = detect_format(path);
  switch (format) {
    case trace_format::native_binary: traces.push_back(open_native_binary(path)); break;
    case trace_format::pytorch_snapshot: traces = snapshot_traces(read_pytorch_snapshot(path)); break;
    case trace_format::rmm_csv: {
      std::ifstream in = open_input(path, "a trace file");
      traces.push_back(read_rmm_csv(in, path));
      break;
    }
    case trace_format::tf_bfc_log: {
      tf_bfc_log const log = read_tf_bfc_log(path);
      traces = tf_log_traces(log);
      for (std::size_t i = 0; i < traces.size(); ++i)
        if (std::string caveat = tf_log_caveats(log, log.allocators[i]); !caveat.empty()) traces[i].notes.push_back(std::move(caveat));
      break;
    }
    case trace_format::native_text: traces.push_back(read_native_text_file(path)); break;
  }
  for (trace& t : traces) t.source_format = to_string(format);
  return traces;
}

std::string allocator_names(std::vector<trace> const& traces)
{
  std::string names;
  for (auto const& t : traces) names += (names.empty() ? "" : ", ") + (t.allocator.empty() ? "cuda:" + std::to_string(t.device) : t.allocator);
  return names;
}

}  // namespace

allocator_choice allocator_choice::parse(std::string_view text)
{
  if (text.empty()) throw std::invalid_argument("--device: expected N, cuda:N or a TF allocator's name, got nothing");
  std::string_view digits = text.starts_with("cuda:") ? text.substr(5) : text;
  int d = 0;
  if (auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
      ec == std::errc{} && end == digits.data() + digits.size() && d >= 0)
    return allocator_choice(d);
  if (text.starts_with("cuda:")) throw std::invalid_argument("--device: expected cuda:N with N a device number, got '" + std::string(text) + "'");
  allocator_choice c;
  c.name = std::string(text);
  return c;
}

bool allocator_choice::matches(trace const& t) const noexcept
{
  if (!t.allocator.empty()) return t.allocator == name;
  return device && t.device == *device;
}

std::string allocator_choice::text() const { return device ? "cuda:" + std::to_string(*device) : name; }

std::vector<trace> read_traces(std::string const& path, std::optional<allocator_choice> which)
{
  std::vector<trace> traces = read_any_format(path);
  if (which) {
    std::vector<trace> all = std::move(traces);
    traces.clear();
    for (auto& t : all)
      if (which->matches(t)) traces.push_back(std::move(t));
    if (traces.empty())
      throw input_error(path + ": no " + (which->device ? "device " : "allocator ") + which->text() + " in it" +
                        (all.empty() ? std::string() : " (it holds " + allocator_names(all) + ")"));
  }
  // As with an empty file: a header alone, or comments alone, is a capture that recorded
  // nothing, and its rows of zeros would enter a table as a trace without fragmentation. An
  // allocator chosen by name is the exception: one that recorded nothing has nothing to replay.
  if (!which) std::erase_if(traces, [](trace const& t) { return t.event_count() == 0; });
  if (traces.empty()) throw input_error(path + ": no events: expected at least one allocation");
  // Frees alone (a capture that began after every allocation) would replay as rows of zeros.
  for (trace const& t : traces)
    if (t.allocs == 0 && t.start_events == 0 && t.event_count() != 0)
      throw input_error(path + ": no allocation in " + (traces.size() > 1 ? t.name : std::string("it")) + ", only " + std::to_string(t.frees) +
                        " frees and " + std::to_string(t.releases) + " cache releases: expected at least one allocation");
  return traces;
}

trace read_trace(std::string const& path, std::optional<allocator_choice> which)
{
  std::vector<trace> traces = read_traces(path, which);
  if (traces.size() > 1)
    throw input_error(path + ": holds " + std::to_string(traces.size()) + " allocators (" + allocator_names(traces) +
                      "): choose one with --device " + (traces.front().allocator.empty() ? "N" : "NAME"));
  return std::move(traces.front());
}

}  // namespace fraglab::trace
