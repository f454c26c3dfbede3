#include <fraglab/runtime/trace/tf_bfc_log.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace fraglab::trace {
namespace {

constexpr std::string_view alloc_line = "[mem-debug] AllocateRaw,";
constexpr std::string_view free_line = "[mem-debug] DeallocateRaw,";
constexpr std::string_view stack_begin = "*** Begin stack trace ***";
constexpr std::string_view stack_end = "*** End stack trace ***";
constexpr std::string_view recorder_header = "fraglab record-tf: ";
constexpr std::size_t longest_site = 200;  // a frame's name can be a page of template arguments

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

std::string_view skip_spaces(std::string_view s) noexcept
{
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view next_token(std::string_view& s) noexcept
{
  s = skip_spaces(s);
  std::size_t const end = std::min(s.find(' '), s.size());
  std::string_view const t = s.substr(0, end);
  s.remove_prefix(end);
  return t;
}

// absl's (glog's) prefix: `I0000 00:00:1796613341.070621    2295 bfc_allocator.cc:328] MESSAGE`.
struct log_line {
  bool prefixed = false;
  std::uint64_t thread = 0;
  std::string_view message;
};

log_line split_prefix(std::string_view line) noexcept
{
  log_line out{false, 0, line};
  if (line.size() < 8 || std::string_view("IWEF").find(line[0]) == std::string_view::npos || !is_digit(line[1])) return out;
  std::string_view rest = line;
  (void)next_token(rest);  // severity and date
  (void)next_token(rest);  // time
  std::string_view const thread = next_token(rest);
  std::string_view const where = next_token(rest);
  if (thread.empty() || where.empty() || where.back() != ']') return out;
  std::uint64_t t = 0;
  if (auto const [end, ec] = std::from_chars(thread.data(), thread.data() + thread.size(), t); ec != std::errc{} || end != thread.data() + thread.size())
    return out;
  out.prefixed = true;
  out.thread = t;
  out.message = rest.empty() ? rest : rest.substr(1);
  return out;
}

bool parse_u64(std::string_view s, std::uint64_t& out, int base = 10) noexcept
{
  if (s.empty()) return false;
  auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc{} && end == s.data() + s.size();
}

// A pointer as TF's logging prints one: 0x7f..., or 0 / 0x0 / (nil) for null.
bool parse_pointer(std::string_view s, std::uint64_t& out) noexcept
{
  if (s == "(nil)" || s == "nullptr" || s == "0") {
    out = 0;
    return true;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return parse_u64(s.substr(2), out, 16);
  return false;
}

// Frames of the stack capture, the allocator and the tensor machinery around it: every
// allocation's stack starts with them.
bool machinery(std::string_view frame) noexcept
{
  constexpr std::array<std::string_view, 10> parts{"CurrentStackTrace", "Allocator::",     "Allocator<",  "TensorBuffer",
                                                   "Tensor::Tensor(",   "::Buffer<",       "allocate_",   "AllocateTensor",
                                                   "AllocateRaw",       "Device::Compute"};
  return frame.empty() || std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return frame.find(p) != std::string_view::npos; });
}

std::string_view without_parameters(std::string_view frame) noexcept
{
  // `ns::Op<T, U>::Compute(tensorflow::OpKernelContext*)`: the parameter list is the last
  // parenthesis at depth 0 of the template brackets; `[abi:cxx11]` tags go with it.
  int depth = 0;
  for (std::size_t i = 0; i < frame.size(); ++i) {
    char const c = frame[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (c == '(' && depth <= 0 && i > 0) return frame.substr(0, i);
    else if (c == '[' && depth <= 0 && frame.substr(i).starts_with("[abi:")) return frame.substr(0, i);
  }
  return frame;
}

bool is_kernel(std::string_view frame) noexcept
{
  std::string_view const f = without_parameters(frame);
  return f.ends_with("::Compute") || f.ends_with("::ComputeAsync");
}

std::string clipped(std::string_view s) { return std::string(s.substr(0, longest_site)); }

// The call site of one stack, as its frames arrive, keeping two names at most: a stack of
// ten thousand frames costs no more than one of ten.
class site_finder {
 public:
  void frame(std::string_view f)
  {
    f = skip_spaces(f);
    if (!kernel_.empty() || machinery(f)) return;
    if (is_kernel(f)) kernel_ = clipped(without_parameters(f));
    else if (first_.empty()) first_ = clipped(without_parameters(f));
  }
  [[nodiscard]] std::string site() const { return kernel_.empty() ? first_ : kernel_; }

 private:
  std::string kernel_, first_;
};

struct pending_event {
  std::size_t key;  // the line that places it in the allocator's order
  std::uint32_t allocator;
  bool locked;  // placed by a line written under the allocator's lock
  std::uint64_t thread;
  tf_event e;
};

struct thread_state {
  std::uint64_t returned = 0;  // the pointer of the last `Returning:` not yet matched, 0: none
  std::size_t returned_line = 0;
  std::string extending;   // the allocator a region is being acquired for
  std::string allocating;  // the allocator an allocation is under way in
  std::size_t free_waiting = SIZE_MAX;  // a free whose line under the lock has not come yet
};

class log_reader {
 public:
  explicit log_reader(std::string const& path) : path_(path) { log_.name = file_base_name(path); }

  tf_bfc_log read()
  {
    std::ifstream in = open_input(path_, "a TensorFlow log");
    std::string line;
    site_finder stack;
    bool in_stack = false;
    std::size_t stack_of = SIZE_MAX;  // the pending event whose stack this is
    bool complete_line = true;
    while (std::getline(in, line)) {
      ++number_;
      complete_line = !in.eof();
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (in_stack) {
        std::string_view const l = line;
        if (skip_spaces(l).starts_with(stack_end)) {
          in_stack = false;
          set_site(stack_of, stack.site());
          continue;
        }
        if (!split_prefix(l).prefixed) {
          stack.frame(l);
          continue;
        }
        // A stack cut short (a killed run, lines of two threads): what came is its site.
        in_stack = false;
        set_site(stack_of, stack.site());
      }
      std::size_t const before = pending_.size();
      std::string_view rest;
      bool const entry = message(line, rest);
      if (entry && !complete_line) {
        // The last line, cut mid-entry (a killed run): its address or size may have lost digits.
        log_.cut_at_line = number_;
        if (pending_.size() > before) pending_.pop_back();
        break;
      }
      if (entry && rest.starts_with(stack_begin)) {
        in_stack = true;
        stack = {};
        stack_of = pending_.size() > before ? pending_.size() - 1 : SIZE_MAX;
        if (rest.size() > stack_begin.size()) stack.frame(rest.substr(stack_begin.size()));
      }
    }
    if (in_stack) {
      log_.cut_at_line = number_;
      set_site(stack_of, stack.site());
    }
    return finish();
  }

 private:
  // Reads one line; true when it was a BFC entry, with `stack` what follows its fields.
  bool message(std::string const& text, std::string_view& stack)
  {
    log_line const l = split_prefix(text);
    std::string_view m = l.message;
    if (!m.starts_with(alloc_line) && !m.starts_with(free_line)) {
      // A program's output without its newline, then TF's line: the entry is still whole.
      std::size_t const at = std::min(m.find(alloc_line), m.find(free_line));
      if (at != std::string_view::npos && !l.prefixed) m = m.substr(at);
    }
    thread_state& t = threads_[l.thread];
    if (m.starts_with(alloc_line) || m.starts_with(free_line)) {
      bool const alloc = m.starts_with(alloc_line);
      m.remove_prefix(alloc ? alloc_line.size() : free_line.size());
      std::array<std::string_view, 3> f{};
      for (std::string_view& field : f) {
        std::size_t const comma = m.find(',');
        field = m.substr(0, comma);
        m = comma == std::string_view::npos ? std::string_view() : m.substr(comma + 1);
      }
      std::uint64_t bytes = 0, ptr = 0;
      if (f[0].empty()) fail("expected the allocator's name after " + std::string(alloc ? "AllocateRaw," : "DeallocateRaw,"));
      if (!parse_u64(f[1], bytes)) fail("expected a size in bytes after the allocator's name, got " + quoted(f[1]));
      if (!parse_pointer(f[2], ptr)) fail("expected an address (0x...) after the size, got " + quoted(f[2]));
      stack = m;
      std::uint32_t const a = allocator(f[0]);
      threads_of_[a].insert(l.thread);
      if (alloc) {
        bool const locked = t.returned != 0 && t.returned == ptr;
        std::size_t const key = locked ? t.returned_line : number_;
        t.returned = 0;
        t.free_waiting = SIZE_MAX;
        if (bytes == 0) return true;  // BFC returns null for 0 bytes and records nothing
        push(key, a, locked, l.thread, {ptr == 0 ? tf_op::failed_alloc : tf_op::alloc, ptr, bytes, number_, 0});
      } else {
        t.free_waiting = SIZE_MAX;
        if (ptr == 0) return true;  // freeing null does nothing
        push(number_, a, false, l.thread, {tf_op::free, ptr, bytes, number_, 0});
        t.free_waiting = pending_.size() - 1;
      }
      return true;
    }
    if (m.starts_with("Returning: ")) {
      std::uint64_t ptr = 0;
      if (parse_pointer(m.substr(11), ptr) && ptr != 0) {
        t.returned = ptr;
        t.returned_line = number_;
      }
    } else if (m.starts_with("F: ")) {
      if (t.free_waiting != SIZE_MAX) {
        pending_[t.free_waiting].key = number_;
        pending_[t.free_waiting].locked = true;
        t.free_waiting = SIZE_MAX;
      }
    } else if (m.starts_with("Extending allocation by ")) {
      std::size_t const at = m.rfind(" for ");
      if (at != std::string_view::npos) {
        std::string_view name = m.substr(at + 5);
        if (name.ends_with('.')) name.remove_suffix(1);
        t.extending = std::string(name);
      }
    } else if (m.starts_with("Allocated memory at ")) {
      std::string_view r = m.substr(20);
      std::string_view const from = next_token(r);
      (void)next_token(r);  // "to"
      std::string_view const to = next_token(r);
      std::uint64_t x = 0, y = 0;
      if (!parse_pointer(from, x) || !parse_pointer(to, y) || y <= x)
        fail("expected 'Allocated memory at 0xBASE to 0xEND', got " + quoted(m));
      std::string const& name = !t.extending.empty() ? t.extending : t.allocating;
      if (!name.empty()) push(number_, allocator(name), true, l.thread, {tf_op::region, x, y - x, number_, 0});
      t.extending.clear();
    } else if (m.starts_with("Deallocate region with ptr = ")) {
      std::uint64_t x = 0;
      if (!parse_pointer(skip_spaces(m.substr(29)), x)) fail("expected 'Deallocate region with ptr = 0xBASE', got " + quoted(m));
      if (!t.allocating.empty()) push(number_, allocator(t.allocating), true, l.thread, {tf_op::region_free, x, 0, number_, 0});
    } else if (m.starts_with("AllocateRaw ")) {
      // `AllocateRaw NAME  BYTES` before an allocation (and `... PTR` after it).
      std::string_view r = m.substr(12);
      std::string_view const name = next_token(r);
      (void)next_token(r);
      if (!name.empty() && next_token(r).empty()) t.allocating = std::string(name);
    } else if (m.starts_with(recorder_header)) {
      std::string_view r = m.substr(recorder_header.size());
      constexpr std::string_view key = "TF_CPU_BFC_MEM_LIMIT_IN_MB=";
      if (std::size_t const at = r.find(key); at != std::string_view::npos) {
        std::string_view v = r.substr(at + key.size());
        v = v.substr(0, std::min(v.find(' '), v.size()));
        std::uint64_t mb = 0;
        if (!parse_u64(v, mb) || mb > (~std::uint64_t{0} >> 20)) fail("expected a whole number of MiB after " + std::string(key) + ", got " + quoted(v));
        log_.cpu_memory_limit = mb << 20;
      }
    }
    return false;
  }

  [[noreturn]] void fail(std::string const& what) const { throw input_error(path_, number_, what); }

  std::uint32_t allocator(std::string_view name)
  {
    auto const [it, added] = allocator_index_.try_emplace(std::string(name), static_cast<std::uint32_t>(log_.allocators.size()));
    if (added) {
      log_.allocators.push_back({});
      log_.allocators.back().name = std::string(name);
      threads_of_.emplace_back();
    }
    return it->second;
  }

  void push(std::size_t key, std::uint32_t a, bool locked, std::uint64_t thread, tf_event e)
  {
    pending_.push_back({key, a, locked, thread, e});
  }

  void set_site(std::size_t event, std::string const& site)
  {
    if (event == SIZE_MAX || event >= pending_.size() || site.empty()) return;
    auto const [it, added] = site_index_.try_emplace(site, static_cast<std::uint32_t>(log_.sites.size()));
    if (added) log_.sites.push_back(site);
    pending_[event].e.site = it->second;
  }

  tf_bfc_log finish()
  {
    std::stable_sort(pending_.begin(), pending_.end(), [](pending_event const& a, pending_event const& b) { return a.key < b.key; });
    struct live_block {
      std::size_t line;
      std::uint32_t site;
    };
    std::vector<std::unordered_map<std::uint64_t, live_block>> live(log_.allocators.size());
    std::vector<std::map<std::uint64_t, std::uint64_t>> regions(log_.allocators.size());
    for (std::size_t i = 0; i < log_.allocators.size(); ++i) log_.allocators[i].threads = threads_of_[i].size();
    for (pending_event& p : pending_) {
      tf_allocator_log& a = log_.allocators[p.allocator];
      tf_event& e = p.e;
      if (e.op != tf_op::region && e.op != tf_op::region_free && !p.locked) a.lock_ordered = false;
      switch (e.op) {
        case tf_op::region: regions[p.allocator][e.address] = e.size; break;
        case tf_op::region_free: {
          auto const r = regions[p.allocator].find(e.address);
          if (r == regions[p.allocator].end()) continue;  // acquired before the log began
          e.size = r->second;
          regions[p.allocator].erase(r);
          break;
        }
        case tf_op::alloc: {
          auto const [it, added] = live[p.allocator].try_emplace(e.address, live_block{e.line, e.site});
          if (!added)
            throw input_error(path_, e.line,
                              a.name + " returned " + address_text(e.address) + ", which the log has live since line " +
                                  std::to_string(it->second.line) +
                                  ": the lines are not in the allocator's order (record at verbosity 4, as fraglab record-tf does, "
                                  "so that each entry has a line written under the allocator's lock)");
          auto const r = regions[p.allocator].upper_bound(e.address);
          if (r == regions[p.allocator].begin() || e.address - std::prev(r)->first >= std::prev(r)->second) ++a.outside_regions;
          break;
        }
        case tf_op::failed_alloc: break;
        case tf_op::free: {
          auto const it = live[p.allocator].find(e.address);
          if (it == live[p.allocator].end()) {
            ++a.unknown_frees;
            continue;
          }
          e.site = it->second.site;  // a free is known by where its block was allocated
          live[p.allocator].erase(it);
          break;
        }
      }
      a.events.push_back(e);
    }
    std::size_t allocations = 0;
    for (auto const& a : log_.allocators)
      allocations += static_cast<std::size_t>(std::count_if(a.events.begin(), a.events.end(), [](tf_event const& e) {
        return e.op == tf_op::alloc || e.op == tf_op::failed_alloc;
      }));
    if (allocations == 0)
      throw input_error(path_ + ": no BFC allocation in it: expected TensorFlow's log at TF_CPP_VMODULE=bfc_allocator=4 with "
                                "TF_CPU_ALLOCATOR_USE_BFC=1 (fraglab record-tf -- PROGRAM records one)");
    return std::move(log_);
  }

  std::string path_;
  tf_bfc_log log_;
  std::size_t number_ = 0;
  std::vector<pending_event> pending_;
  std::unordered_map<std::uint64_t, thread_state> threads_;
  std::unordered_map<std::string, std::uint32_t> allocator_index_;
  std::vector<std::unordered_set<std::uint64_t>> threads_of_;
  std::unordered_map<std::string, std::uint32_t> site_index_;
};

}  // namespace

bool looks_like_tf_bfc_log(std::string_view head) noexcept
{
  return head.find(alloc_line) != std::string_view::npos || head.find(free_line) != std::string_view::npos ||
         head.find("bfc_allocator.cc:") != std::string_view::npos || head.starts_with(recorder_header);
}

tf_bfc_log read_tf_bfc_log(std::string const& path) { return log_reader(path).read(); }

std::string tf_call_site(std::vector<std::string_view> const& frames)
{
  site_finder f;
  for (std::string_view const frame : frames) f.frame(frame);
  return f.site();
}

std::vector<trace> tf_log_traces(tf_bfc_log const& log)
{
  std::vector<trace> traces;
  for (tf_allocator_log const& a : log.allocators) {
    trace& t = traces.emplace_back();
    t.name = log.allocators.size() == 1 ? log.name : log.name + "@" + a.name;
    t.allocator = a.name;
    bool const with_sites = log.sites.size() > 1;
    if (with_sites) t.sites = log.sites;
    std::unordered_map<std::uint64_t, std::uint32_t> slots;
    for (tf_event const& e : a.events) {
      switch (e.op) {
        case tf_op::alloc: {
          auto const slot = slots.try_emplace(e.address, static_cast<std::uint32_t>(slots.size())).first->second;
          t.events.push_back({op::alloc, slot, static_cast<std::size_t>(e.size), 1, 0});
          ++t.allocs;
          break;
        }
        case tf_op::free:
          t.events.push_back({op::free, slots.at(e.address), 0, 1, 0});
          ++t.frees;
          break;
        case tf_op::failed_alloc: ++t.recorded_failures; continue;
        case tf_op::region: t.recorded_segments.push_back({e.address, e.size}); continue;
        case tf_op::region_free: continue;
      }
      if (with_sites) t.event_sites.push_back(e.site);
    }
    t.slots = slots.size();
  }
  return traces;
}

std::string tf_log_caveats(tf_bfc_log const& log, tf_allocator_log const& a)
{
  std::string out;
  auto const add = [&](std::string const& s) { out += (out.empty() ? "" : "; ") + s; };
  if (a.starts_mid_run())
    add("the log starts mid-run (" + std::to_string(a.unknown_frees) + " frees of blocks allocated before its first line, " +
        std::to_string(a.outside_regions) +
        " allocations outside the regions it shows acquired): a replay starts from its first line, and verify cannot check it, "
        "since the allocator's state then is unknown");
  if (!a.order_known())
    add(std::to_string(a.threads) +
        " threads allocated and freed, and the log has no lines written under the allocator's lock (verbosity below 4): its order "
        "may not be the allocator's");
  if (log.cut_at_line != 0) add("the log ends inside an entry at line " + std::to_string(log.cut_at_line) + ", read up to the last whole one");
  return out;
}

}  // namespace fraglab::trace
