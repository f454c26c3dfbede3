#include <fraglab/runtime/trace/pytorch_snapshot.hpp>

#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/pickle/pickle_reader.hpp>
#include <fraglab/runtime/trace/call_site.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace fraglab::trace {
namespace {

namespace pt = presets::pytorch;

class snapshot_parser {
 public:
  explicit snapshot_parser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(std::string const& what) const { throw input_error(path_ + ": " + what); }

  // Runs `parse` and puts `place` (device_traces[0][17], segments[3]) in front of what it
  // refuses: where in the snapshot the bad entry is, at no cost while nothing is refused.
  template <class Parse>
  auto at(std::string const& place, Parse&& parse) const
  {
    try {
      return parse();
    } catch (input_error const& e) {
      std::string_view what = e.what();
      if (what.starts_with(path_ + ": ")) what.remove_prefix(path_.size() + 2);
      fail(place + ": " + std::string(what));
    }
  }

  pickle::value const& field(pickle::value const& dict, char const* key, char const* where) const
  {
    pickle::value const* v = dict.get(key);
    if (v == nullptr) fail(std::string("expected key '") + key + "' in " + where);
    return *v;
  }

  std::uint64_t number(pickle::value const& dict, char const* key, char const* where) const
  {
    pickle::value const& v = field(dict, key, where);
    if (std::holds_alternative<pickle::big_integer>(v.v))
      fail(std::string("expected a non-negative integer below 2^63 for '") + key + "' in " + where + ", got a larger one");
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

  // allocator_settings (c10/cuda/CUDAAllocatorConfig, as _dump_snapshot records it).
  recorded_settings parse_settings(pickle::value const& dict) const
  {
    if (!dict.is_dict()) fail("expected a dict for 'allocator_settings'");
    recorded_settings r;
    auto flag = [&](pickle::value const& v, std::string const& key) {
      if (!std::holds_alternative<bool>(v.v)) fail("expected True or False for '" + key + "' in allocator_settings");
      return std::get<bool>(v.v);
    };
    auto real = [&](pickle::value const& v, std::string const& key) {
      if (auto const* d = std::get_if<double>(&v.v)) return *d;
      if (v.is_int()) return static_cast<double>(v.as_int());
      fail("expected a number for '" + key + "' in allocator_settings");
    };
    for (auto const& [kp, vp] : std::get<pickle::dict_value>(dict.v).items) {
      if (!kp->is_text()) continue;
      std::string const& key = kp->as_text();
      pickle::value const& v = *vp;
      if (key == "max_split_size") {
        if (!v.is_int() || (v.as_int() < 0 && v.as_int() != -1))
          fail("expected -1 or a byte count for 'max_split_size' in allocator_settings");
        r.max_split_size = v.as_int();
      } else if (key == "expandable_segments") {
        r.expandable_segments = flag(v, key);
      } else if (key == "garbage_collection_threshold") {
        r.garbage_collection_threshold = real(v, key);
        if (!(r.garbage_collection_threshold >= 0.0 && r.garbage_collection_threshold < 1.0))
          fail("expected a garbage_collection_threshold in [0, 1) in allocator_settings");
      } else if (key == "roundup_power2_divisions") {
        r.roundup_power2_divisions = parse_divisions(v);
      } else if (key == "PYTORCH_CUDA_ALLOC_CONF") {
        if (!v.is_text() && !v.is_none()) fail("expected a string for 'PYTORCH_CUDA_ALLOC_CONF' in allocator_settings");
        if (v.is_text()) read_configuration_text(v.as_text(), r);
      } else if (key.rfind("pinned_", 0) == 0 || key == "release_lock_on_cudamalloc") {
        // Host memory; whether a lock is held around cudaMalloc: nothing a replay decides.
      } else if (!at_default(v)) {
        r.unmodelled.push_back(key + "=" + display(v));
      }
    }
    return r;
  }

  // Whether a key of the text has the value that leaves PyTorch's decisions as the presets make
  // them: 0 or False, or the default of a key whose default is neither (the 20 MiB large
  // segment, a memory fraction of 1).
  static bool at_default_text(std::string const& key, std::string const& value)
  {
    if (value.empty() || value == "0" || value == "False" || value == "false") return true;
    static constexpr std::array<std::pair<std::string_view, double>, 2> defaults{
        {{"large_segment_size_mb", 20.0}, {"per_process_memory_fraction", 1.0}}};
    for (auto const& [name, fallback] : defaults) {
      if (key != name) continue;
      double number = 0;
      auto const [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      return ec == std::errc{} && end == value.data() + value.size() && number == fallback;
    }
    return false;
  }

  // The PYTORCH_CUDA_ALLOC_CONF text PyTorch parsed, KEY:VALUE,... (a list value in
  // brackets), recorded beside the values it parsed into. A key with a field of its own is
  // read there; the others are read here: max_non_split_rounding_mb is applied, backend
  // native is PyTorch's own allocator, and any other key at a value other than its default
  // (per_process_memory_fraction, whose device size a snapshot does not record, a newer
  // PyTorch's segment and page sizes, cudaMallocAsync) is one no preset models.
  void read_configuration_text(std::string const& text, recorded_settings& r) const
  {
    static constexpr std::array<std::string_view, 9> own_field{
        "max_split_size_mb",  "roundup_power2_divisions",    "garbage_collection_threshold",
        "expandable_segments", "pinned_use_cuda_host_register", "pinned_num_register_threads",
        "release_lock_on_cudamalloc", "pinned_use_background_threads", "graph_capture_record_stream_reuse"};
    auto trim = [](std::string_view t) {
      while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
      return t;
    };
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      if (i < text.size()) {
        if (text[i] == '[') ++depth;
        else if (text[i] == ']') --depth;
        if (text[i] != ',' || depth > 0) continue;
      }
      std::string_view const item = trim(std::string_view(text).substr(start, i - start));
      start = i + 1;
      if (item.empty()) continue;
      std::size_t const colon = item.find(':');
      if (colon == std::string_view::npos)
        fail("expected KEY:VALUE items in allocator_settings' PYTORCH_CUDA_ALLOC_CONF, got " + quoted(std::string(item)));
      std::string const key(trim(item.substr(0, colon)));
      std::string const value(trim(item.substr(colon + 1)));
      if (std::find(own_field.begin(), own_field.end(), key) != own_field.end()) continue;
      if (key == "max_non_split_rounding_mb") {
        std::uint64_t mib = 0;
        auto const [end, ec] = std::from_chars(value.data(), value.data() + value.size(), mib);
        if (ec != std::errc{} || end != value.data() + value.size() || mib >= (std::uint64_t{1} << 40))
          fail("expected a whole number of MiB for max_non_split_rounding_mb in PYTORCH_CUDA_ALLOC_CONF, got " + quoted(value));
        r.max_non_split_rounding = static_cast<std::int64_t>(mib << 20);
      } else if (key == "backend") {
        if (value != "native") r.unmodelled.push_back(key + "=" + value);
      } else if (!at_default_text(key, value)) {
        r.unmodelled.push_back(key + "=" + value);
      }
    }
  }

  // Recent PyTorch records {"1": N, "2": N, ..., "32768": N}: the interval's start in MiB.
  std::array<std::size_t, 16> parse_divisions(pickle::value const& v) const
  {
    std::array<std::size_t, 16> d{};
    auto divisions = [&](pickle::value const& n) {
      if (!n.is_int() || n.as_int() < 0 || (n.as_int() > 1 && !std::has_single_bit(static_cast<std::uint64_t>(n.as_int()))))
        fail("expected 0 or a power of two in 'roundup_power2_divisions'");
      return static_cast<std::size_t>(n.as_int());
    };
    if (v.is_int()) {
      d.fill(divisions(v));  // one number for every interval
      return d;
    }
    if (!v.is_dict()) fail("expected a dict or a number for 'roundup_power2_divisions' in allocator_settings");
    for (auto const& [kp, np] : std::get<pickle::dict_value>(v.v).items) {
      std::string const key = kp->is_text() ? kp->as_text() : kp->is_int() ? std::to_string(kp->as_int()) : "";
      std::uint64_t mib = 0;
      auto const [end, ec] = std::from_chars(key.data(), key.data() + key.size(), mib);
      if (ec != std::errc{} || end != key.data() + key.size() || !std::has_single_bit(mib) || std::countr_zero(mib) >= 16)
        fail("expected interval starts 1, 2, 4, ..., 32768 (MiB) in 'roundup_power2_divisions', got " + quoted(key));
      d[static_cast<std::size_t>(std::countr_zero(mib))] = divisions(*np);
    }
    return d;
  }

  static std::string display(pickle::value const& v)
  {
    if (auto const* b = std::get_if<bool>(&v.v)) return *b ? "True" : "False";
    if (v.is_int()) return std::to_string(v.as_int());
    if (auto const* d = std::get_if<double>(&v.v)) return std::to_string(*d);
    if (v.is_text()) return quoted(v.as_text());
    return "(a " + std::string(v.is_list() ? "list" : v.is_dict() ? "dict" : "value") + ")";
  }

  // False, 0, 0.0, -1, None, an empty text or container: what PyTorch's settings default to.
  static bool at_default(pickle::value const& v)
  {
    if (v.is_none()) return true;
    if (auto const* b = std::get_if<bool>(&v.v)) return !*b;
    if (v.is_int()) return v.as_int() == 0 || v.as_int() == -1;
    if (auto const* d = std::get_if<double>(&v.v)) return *d == 0.0;
    if (v.is_text()) return v.as_text().empty();
    if (v.is_list()) return v.as_list().empty();
    if (v.is_dict()) return std::get<pickle::dict_value>(v.v).items.empty();
    return false;
  }

  // A segment's segment_pool_id, as "(A, B)", where it is a private pool's; "" for the
  // default pools' ((0, 0), or none recorded).
  std::string private_pool(pickle::value const& segment) const
  {
    pickle::value const* id = segment.get("segment_pool_id");
    if (id == nullptr || id->is_none()) return "";
    if (!id->is_list() || id->as_list().size() != 2 || !id->as_list()[0]->is_int() || !id->as_list()[1]->is_int())
      fail("expected a pair of integers for 'segment_pool_id' in a segment");
    std::int64_t const a = id->as_list()[0]->as_int(), b = id->as_list()[1]->as_int();
    return a == 0 && b == 0 ? "" : "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
  }

  // The device a segment is on; snapshots of one device may leave it out.
  std::uint64_t device_of(pickle::value const& segment) const
  {
    return segment.get("device") == nullptr ? 0 : number(segment, "device", "a segment");
  }

  pytorch_snapshot parse()
  {
    entry_reader entries(*this);
    pickle::value_ptr root = pickle::parse_file(path_, &entries);
    if (!root->is_dict()) fail("expected a dict at the top of a PyTorch memory snapshot");
    pytorch_snapshot s;
    s.name = file_base_name(path_);
    if (pickle::value const* settings = root->get("allocator_settings"); settings != nullptr) s.settings = parse_settings(*settings);
    settings_ = s.settings;
    auto const& segments = list(field(*root, "segments", "the snapshot"), "'segments'");
    pickle::value const& traces_value = field(*root, "device_traces", "the snapshot");
    auto const& traces = list(traces_value, "'device_traces'");
    // A device is one with a trace entry or a segment; a segment names its device.
    std::set<std::uint64_t> devices;
    for (std::size_t d = 0; d < traces.size(); ++d) devices.insert(d);
    std::map<std::uint64_t, std::vector<pickle::value_ptr>> segments_of;  // each device's, read once
    for (std::size_t k = 0; k < segments.size(); ++k) {
      auto const& sp = segments[k];
      if (!sp->is_dict()) fail("segments[" + std::to_string(k) + "]: expected a dict for each segment");
      segment_index_[sp.get()] = k;
      std::uint64_t const d = at("segments[" + std::to_string(k) + "]", [&] { return device_of(*sp); });
      devices.insert(d);
      segments_of[d].push_back(sp);
    }
    std::vector<pickle::value_ptr> const none;
    s.recorded_devices = devices.size();
    for (std::uint64_t d : devices) {
      if (d > std::uint64_t{std::numeric_limits<int>::max()}) fail("expected a device number, got " + std::to_string(d));
      auto const mine = segments_of.find(d);
      device_entries read = d < traces.size() ? entries.of(*traces[d], static_cast<int>(d)) : device_entries{};
      device_snapshot dev = parse_device(static_cast<int>(d), mine == segments_of.end() ? none : mine->second, std::move(read));
      s.devices.push_back(std::move(dev));  // one with nothing recorded is an allocator with nothing to replay
    }
    return s;
  }

 private:
  // One device's entries as read, and the first that could not be.
  struct device_entries {
    device_snapshot out;
    std::unordered_map<std::string, std::uint32_t> site_index;  // out.sites, interned
    std::vector<std::uint32_t> site_of_stack;  // by stack read (stack_sites_), its site here; ~0: not yet
    std::uint64_t read = 0;  // entries read so far, their indices 0, 1, ...
    std::optional<std::pair<std::uint64_t, std::string>> failure;  // the first bad one: its index, what
  };

  // Reads device_traces' entries as the pickle is read, so that none is held as a dict: each
  // becomes a snapshot_event of the list it is in, whichever device that turns out to be.
  // An entry is a dict with an 'action'; a list in which one arrived is a device's trace, and
  // every item of it must be one.
  class entry_reader final : public pickle::item_sink {
   public:
    explicit entry_reader(snapshot_parser& p) : p_(p) {}

    bool take(pickle::value const& item, pickle::value const& list, std::uint64_t index, bool /*exclusive*/) override
    {
      pickle::value const* action = item.is_dict() ? item.get("action") : nullptr;
      auto it = lists_.find(&list);
      if (action == nullptr || !action->is_text()) {
        if (it != lists_.end()) p_.read_entry(it->second, item, index);  // to say what it lacks
        return false;
      }
      if (it == lists_.end()) it = lists_.emplace(&list, device_entries{}).first;
      p_.read_entry(it->second, item, index);
      return true;
    }

    // The entries of the trace `list` (device `device`'s): those read as they came, and any
    // the list kept (a list whose entries were all refused, or shared ones), read now.
    device_entries of(pickle::value const& list, int device)
    {
      auto it = lists_.find(&list);
      device_entries d = it == lists_.end() ? device_entries{} : std::move(it->second);
      d.out.device = device;
      if (!list.is_list()) p_.fail("device_traces[" + std::to_string(device) + "]: expected a list for a device trace");
      if (it == lists_.end())
        for (std::size_t i = 0; i < list.as_list().size(); ++i) p_.read_entry(d, *list.as_list()[i], i);
      return d;
    }

   private:
    snapshot_parser& p_;
    std::unordered_map<pickle::value const*, device_entries> lists_;
  };

  struct live_info {
    std::uint64_t block_size;  // 0: not recorded, derive it
    std::uint64_t requested;
    std::uint64_t stream;
    std::uint32_t site;
  };

  // The call site of an event's or a block's `frames`, as an index into out.sites (0: none).
  // Frames are what a person reads, not what a replay decides: a stack in another shape
  // than PyTorch's gives no site rather than an error.
  std::uint32_t site_of(pickle::value const& dict, device_entries& d)
  {
    pickle::value const* frames = dict.get("frames");
    if (frames == nullptr || !frames->is_list() || frames->as_list().empty()) return 0;
    // PyTorch writes each distinct stack once and refers to it again through the memo: each
    // is read once, its call site kept (stack_sites_) and the stack marked with it.
    if (frames->reader_mark == 0) {
      stack_sites_.push_back(call_site_of(*frames));
      frames->reader_mark = static_cast<std::uint32_t>(stack_sites_.size());
    }
    std::uint32_t const read = frames->reader_mark - 1;
    if (read >= d.site_of_stack.size()) d.site_of_stack.resize(stack_sites_.size(), ~std::uint32_t{0});
    std::uint32_t& site = d.site_of_stack[read];
    if (site == ~std::uint32_t{0}) site = intern_site(stack_sites_[read], d.out, d.site_index);
    return site;
  }

  std::string call_site_of(pickle::value const& frames)
  {
    stack_.clear();
    for (auto const& fp : frames.as_list()) {
      if (!fp->is_dict()) continue;
      pickle::value const* name = fp->get("name");
      pickle::value const* file = fp->get("filename");
      pickle::value const* line = fp->get("line");
      if (name == nullptr || file == nullptr || !name->is_text() || !file->is_text()) continue;
      stack_.push_back({name->as_text(), file->as_text(), line != nullptr && line->is_int() ? line->as_int() : 0});
    }
    return call_site(stack_);
  }

  // A call site's index in out.sites, added where new ("" is none, 0).
  static std::uint32_t intern_site(std::string const& site, device_snapshot& out, std::unordered_map<std::string, std::uint32_t>& index)
  {
    if (site.empty()) return 0;
    if (out.sites.empty()) out.sites.emplace_back();
    auto const [it, added] = index.try_emplace(site, static_cast<std::uint32_t>(out.sites.size()));
    if (added) out.sites.push_back(site);
    return it->second;
  }

  std::unordered_map<pickle::value const*, std::size_t> segment_index_;  // a segment's place in `segments`

  struct segment_info {
    std::uint64_t size;
    std::uint64_t stream;
    bool small;
  };

  // Entry `index` of a device's trace into d.out, or its fault into d.failure (the first
  // only: entries after a bad one are counted, not read).
  void read_entry(device_entries& d, pickle::value const& e, std::uint64_t index)
  {
    if (index != d.read && !d.failure) d.failure = {d.read, "expected a trace entry (a dict with an 'action')"};
    d.read = index + 1;
    if (d.failure) return;
    try {
      add_event(d, e, index);
    } catch (input_error const& error) {
      std::string_view what = error.what();
      if (what.starts_with(path_ + ": ")) what.remove_prefix(path_.size() + 2);
      d.failure = {index, std::string(what)};
    }
  }

  void add_event(device_entries& d, pickle::value const& e, std::uint64_t index)
  {
    device_snapshot& out = d.out;
    if (!e.is_dict()) fail("expected a dict for each entry of a device trace");
    std::string const action = text(e, "action", "an event");
    if (index > std::numeric_limits<std::uint32_t>::max()) fail("more than 2^32 entries in a device trace");
    snapshot_event ev{};
    ev.index = static_cast<std::uint32_t>(index);
    if (action == "alloc") ev.op = snapshot_op::alloc;
    else if (action == "free_completed") ev.op = snapshot_op::free;
    else if (action == "segment_alloc") ev.op = snapshot_op::segment_alloc;
    else if (action == "segment_free") ev.op = snapshot_op::segment_free;
    else if (action == "segment_map") ev.op = snapshot_op::segment_map;
    else if (action == "segment_unmap") ev.op = snapshot_op::segment_unmap;
    else if (action == "oom") ev.op = snapshot_op::oom;
    else {
      // free_requested and snapshot are not decisions to replay; anything else is new.
      if (action != "free_requested" && action != "snapshot") ++out.unknown_actions[action];
      return;
    }
    if (ev.op == snapshot_op::oom) ++out.recorded_ooms;
    // An oom records the device's free bytes: as `addr` until PyTorch 2.x, as `device_free`
    // (with no `addr`) since.
    ev.address = ev.op == snapshot_op::oom && e.get("device_free") != nullptr ? number(e, "device_free", "an oom event")
                                                                              : number(e, "addr", "an event");
    ev.size = number(e, "size", "an event");
    if (ev.size == 0) fail("expected a positive 'size' in a '" + action + "' event (PyTorch records no empty blocks)");
    ev.stream = number(e, "stream", "an event");
    if (ev.op == snapshot_op::alloc || ev.op == snapshot_op::free) ev.site = site_of(e, d);
    out.events.push_back(ev);
  }

  device_snapshot parse_device(int device, std::vector<pickle::value_ptr> const& segments, device_entries entries)
  {
    device_snapshot& out = entries.out;
    out.device = device;
    std::map<std::uint64_t, segment_info> segs;
    std::map<std::uint64_t, live_info> live;
    std::map<std::uint64_t, segment_info> end_segs;
    for (std::size_t k = 0; k < segments.size(); ++k) at("segments[" + std::to_string(segment_index_.at(segments[k].get())) + "]", [&] {
      pickle::value const& seg = *segments[k];
      std::uint64_t const address = number(seg, "address", "a segment");
      std::string const type = text(seg, "segment_type", "a segment");
      if (type != "small" && type != "large") fail("expected segment_type 'small' or 'large', got " + quoted(type));
      std::uint64_t const stream = number(seg, "stream", "a segment");
      if (std::string pool = private_pool(seg); !pool.empty() &&
          std::find(out.private_pools.begin(), out.private_pools.end(), pool) == out.private_pools.end())
        out.private_pools.push_back(std::move(pool));
      segs[address] = {number(seg, "total_size", "a segment"), stream, type == "small"};
      std::uint64_t const total = segs[address].size;
      std::uint64_t next_block = address;  // where the next block starts when it records no address
      for (auto const& bp : list(field(seg, "blocks", "a segment"), "a segment's 'blocks'")) {
        pickle::value const& b = *bp;
        if (!b.is_dict()) fail("expected a dict for each block");
        std::uint64_t const block_address = b.get("address") != nullptr ? number(b, "address", "a block") : next_block;
        std::uint64_t const size = number(b, "size", "a block");
        if (block_address < address || size > total || block_address - address > total - size)
          fail("block at " + std::to_string(block_address) + " of " + std::to_string(size) + " B lies outside its segment at " +
               std::to_string(address));
        next_block = block_address + size;
        std::string const state = text(b, "state", "a block");
        if (state == "inactive") continue;
        std::uint64_t const requested = number(b, "requested_size", "a block");
        if (requested == 0) fail("expected a positive 'requested_size' in a live block (PyTorch records no empty blocks)");
        live[block_address] = {size, requested, stream, site_of(b, entries)};
      }
    });
    if (entries.failure)
      fail("device_traces[" + std::to_string(device) + "][" + std::to_string(entries.failure->first) + "]: " + entries.failure->second);
    end_segs = segs;
    for (auto it = out.events.rbegin(); it != out.events.rend(); ++it) {
      switch (it->op) {
        case snapshot_op::alloc: live.erase(it->address); break;
        case snapshot_op::free: live[it->address] = {0, it->size, it->stream, it->site}; break;
        case snapshot_op::segment_alloc: segs.erase(it->address); break;
        case snapshot_op::segment_free: segs[it->address] = {it->size, it->stream, it->size == pt::small_buffer}; break;
        case snapshot_op::segment_map: unmap_before(segs, it->address, it->size); break;
        case snapshot_op::segment_unmap: map_before(segs, it->address, *it); break;
        case snapshot_op::oom: break;
      }
    }
    std::map<std::uint64_t, segment_info> const start_segs = segs;
    for (auto const& [address, info] : segs) {
      snapshot_segment seg{address, info.size, info.stream, info.small, {}};
      if (settings_.expandable_segments) seg.reservation_base = reservation_base(address, info, start_segs, end_segs);
      for (auto it = live.lower_bound(address); it != live.end() && it->first < address + info.size; ++it)
        seg.live.push_back({it->first, it->second.block_size, it->second.requested, it->second.site});
      out.initial_segments.push_back(std::move(seg));
    }
    size_unknown_blocks(out.initial_segments, out.events);
    return std::move(out);
  }

  // The lowest address of a segment at the start or the end in the same pool (stream and
  // segment_type) as the start's segment at `address`, reached going down from it before any
  // segment of another pool: the pools' reservations are disjoint, so it is in this one. 0
  // when none lies below.
  static std::uint64_t reservation_base(std::uint64_t address, segment_info const& info,
                                        std::map<std::uint64_t, segment_info> const& start,
                                        std::map<std::uint64_t, segment_info> const& end)
  {
    std::map<std::uint64_t, segment_info> below(start.begin(), start.lower_bound(address));
    below.insert(end.begin(), end.lower_bound(address));
    std::uint64_t lowest = 0;
    for (auto it = below.rbegin(); it != below.rend(); ++it) {
      if (it->second.stream != info.stream || it->second.small != info.small) break;
      lowest = it->first;
    }
    return lowest;
  }

  // Walking back over a segment_map: before it, the pages were not mapped. PyTorch reports
  // each run of an expandable segment's mapped pages as one segment; a mapping made one, or
  // grew one at either end, or filled the hole between two.
  static void unmap_before(std::map<std::uint64_t, segment_info>& segs, std::uint64_t address, std::uint64_t size)
  {
    auto it = segs.upper_bound(address);
    if (it == segs.begin()) return;
    --it;
    std::uint64_t const base = it->first;
    segment_info const whole = it->second;
    if (address + size > base + whole.size) return;  // not inside one segment: nothing this knows
    segs.erase(it);
    if (address > base) segs[base] = {address - base, whole.stream, whole.small};
    if (address + size < base + whole.size) segs[address + size] = {base + whole.size - address - size, whole.stream, whole.small};
  }

  // Walking back over a segment_unmap: before it, the pages were mapped, joining the segment
  // that ends where they start and the one that starts where they end, where there are such.
  static void map_before(std::map<std::uint64_t, segment_info>& segs, std::uint64_t address, snapshot_event const& e)
  {
    std::uint64_t base = address;
    std::uint64_t end = address + e.size;
    segment_info joined{e.size, e.stream, e.size % pt::large_buffer != 0};
    auto after = segs.lower_bound(address);
    if (after != segs.end() && after->first == end) {
      end += after->second.size;
      joined.small = after->second.small;
      after = segs.erase(after);
    }
    if (after != segs.begin()) {
      auto before = std::prev(after);
      if (before->first + before->second.size == address) {
        base = before->first;
        joined.small = before->second.small;
        segs.erase(before);
      }
    }
    joined.size = end - base;
    segs[base] = joined;
  }

  // A block live at the start whose size was not recorded (it is freed during the recording)
  // ends between its rounded size and the most PyTorch leaves unsplit behind it: nothing in a
  // small segment (every remainder of 512 B or more is split), 1 MiB in a large one, and
  // max_non_split_rounding (20 MiB unless recorded) behind an oversize block under
  // max_split_size. The trace says where: the lowest allocation recorded in that window while
  // the block is live starts where it ends (a free block's first allocation takes its low
  // part). Without one, the block reaches the next live block when that is within the window,
  // else it has no tail.
  // One pass over the events: the windows lie in distinct gaps, so they never overlap.
  void size_unknown_blocks(std::vector<snapshot_segment>& segments, std::vector<snapshot_event> const& events) const
  {
    pt::size_rule round{};
    round.divisions = settings_.roundup_power2_divisions;
    auto const max_split = settings_.max_split_size < 0 ? pt::unlimited : static_cast<std::size_t>(settings_.max_split_size);
    std::uint64_t const non_split_rounding =
        settings_.max_non_split_rounding < 0 ? pt::large_buffer : static_cast<std::uint64_t>(settings_.max_non_split_rounding);
    struct window {
      std::uint64_t hi;
      snapshot_block* block;
      std::uint64_t fallback_end;
      std::uint64_t lowest = ~std::uint64_t{0};  // the lowest allocation seen in it
      bool live = true;
    };
    std::map<std::uint64_t, window> windows;     // by its low end
    std::unordered_map<std::uint64_t, std::uint64_t> window_of;  // block address -> low end
    for (auto& seg : segments)
      for (std::size_t i = 0; i < seg.live.size(); ++i) {
        auto& b = seg.live[i];
        if (b.size != 0) continue;
        b.size = *round.round(b.requested);
        std::uint64_t const next = i + 1 < seg.live.size() ? seg.live[i + 1].address : seg.address + seg.size;
        if (next < b.address || b.size > next - b.address)
          fail("block at " + std::to_string(b.address) + " overlaps the next one in its segment");
        if (seg.small) continue;
        std::uint64_t const tail = b.size >= max_split ? non_split_rounding : pt::small_size;
        std::uint64_t const lo = b.address + b.size;
        windows[lo] = {lo + std::min(tail, next - lo), &b, next - lo <= tail ? next : lo};
        window_of[b.address] = lo;
      }
    if (windows.empty()) return;
    for (snapshot_event const& e : events) {
      if (e.op == snapshot_op::free) {
        if (auto const w = window_of.find(e.address); w != window_of.end()) windows.at(w->second).live = false;
      } else if (e.op == snapshot_op::alloc) {
        auto it = windows.upper_bound(e.address);
        if (it == windows.begin()) continue;
        --it;
        if (it->second.live && e.address <= it->second.hi) it->second.lowest = std::min(it->second.lowest, e.address);
      }
    }
    for (auto const& [lo, w] : windows)
      w.block->size = (w.lowest != ~std::uint64_t{0} ? w.lowest : w.fallback_end) - w.block->address;
  }

  std::string path_;
  recorded_settings settings_;  // the rounding and split rules the start state was made under
  std::vector<stack_frame> stack_;                             // one event's frames, reused
  std::vector<std::string> stack_sites_;                       // each stack read, its call site
};

}  // namespace

pytorch_snapshot read_pytorch_snapshot(std::string const& path) { return snapshot_parser(path).parse(); }

}  // namespace fraglab::trace
