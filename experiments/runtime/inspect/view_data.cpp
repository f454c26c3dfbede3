#include <fraglab/runtime/inspect/view_data.hpp>

#include <fraglab/runtime/inspect/drive.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <stdexcept>

namespace fraglab {
namespace {

struct chunk {
  std::uintptr_t address;
  std::size_t size, requested;
  bool in_use;
  std::uint64_t region;
};

struct state {
  std::uint64_t event = 0;
  std::vector<chunk> chunks;  // by address
};

std::string quoted_json(std::string const& s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += std::string("\\") + c;
    else if (c == '<') out += "\\u003c";  // never </script> inside the page
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

// Addresses packed for drawing: every range that some region covered at some state, in
// address order, laid end to end; the empty address space between them is left out.
struct packing {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;  // [begin, end), merged
  std::vector<std::uint64_t> starts;                               // packed start of each
  std::uint64_t total = 0;

  explicit packing(std::vector<state> const& states)
  {
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> all;
    for (state const& s : states)
      for (chunk const& c : s.chunks) all.emplace_back(c.address, c.address + c.size);
    std::sort(all.begin(), all.end());
    for (auto const& r : all) {
      if (!ranges.empty() && r.first <= ranges.back().second) ranges.back().second = std::max(ranges.back().second, r.second);
      else ranges.push_back(r);
    }
    for (auto const& r : ranges) {
      starts.push_back(total);
      total += r.second - r.first;
    }
  }
  [[nodiscard]] std::uint64_t at(std::uintptr_t address) const
  {
    auto const it = std::upper_bound(ranges.begin(), ranges.end(), address, [](std::uintptr_t a, auto const& r) { return a < r.first; });
    std::size_t const i = static_cast<std::size_t>(it - ranges.begin()) - 1;
    return starts[i] + (address - ranges[i].first);
  }
};

}  // namespace

void fit_page(view_options& o, std::size_t policies)
{
  std::size_t const states = (o.states + o.at.size() + 1) * std::max<std::size_t>(1, policies);
  std::size_t const most_states = page_chunks / fewest_buckets;
  if (states > most_states)
    throw std::invalid_argument("--states " + std::to_string(o.states) + (o.at.empty() ? "" : " and --at") + " with " + std::to_string(policies) +
                                " polic" + (policies == 1 ? "y" : "ies") + " asks for a page of " + std::to_string(states) +
                                " states; a page holds at most " + std::to_string(most_states) +
                                " (all policies together), so that a browser opens it: ask for fewer states or policies");
  o.max_segments = std::min(o.max_segments, page_chunks / states);
}

std::string view_data_json(trace::trace const& t, std::vector<composition const*> const& policies, view_options const& o)
{
  // The events every policy is looked at: spread evenly, and each policy's peak.
  std::uint64_t const events = t.event_count();
  std::set<std::uint64_t> at;
  for (std::size_t k = 1; k <= o.states && events > 0; ++k) at.insert(std::max<std::uint64_t>(1, events * k / o.states));
  for (std::uint64_t const n : o.at) {
    if (n == 0 || n > events)
      throw std::invalid_argument("--at " + std::to_string(n) + ": " + t.name + " has events 1 to " + std::to_string(events));
    at.insert(n);
  }
  std::vector<std::uint64_t> peaks;
  for (composition const* c : policies) {
    peaks.push_back(events_to_peak_reserved(*c, t));
    if (peaks.back() > 0) at.insert(peaks.back());
  }
  std::vector<std::uint64_t> const points(at.begin(), at.end());

  std::string out = "{\"trace\":" + quoted_json(t.name) + ",\"events\":" + std::to_string(events) + ",\"points\":[";
  for (std::size_t i = 0; i < points.size(); ++i) {
    out += (i ? "," : "");
    out += std::to_string(points[i]);
  }
  out += "],\"policies\":[";
  // The call sites shown (the trace's, where it records them), [0] = "" for none.
  bool const has_sites = !t.sites.empty() && t.event_sites.size() == t.events.size() && !t.streamed();
  std::vector<std::string> shown_sites{""};
  std::map<std::uint32_t, std::size_t> shown_index{{0, 0}};
  for (std::size_t p = 0; p < policies.size(); ++p) {
    composition const& c = *policies[p];
    replay_options options;
    options.repeats = 0;
    options.timeseries = true;
    replay_result const r = c.replay(t, options);

    auto a = c.make();
    std::vector<state> states;
    std::size_t next = 0;
    // Each slot's block's call site, and at the peak each live block's, by address.
    std::vector<std::uintptr_t> slot_address(has_sites ? t.slots : 0, 0);
    std::vector<std::uint32_t> slot_site(slot_address.size(), 0);
    std::unordered_map<std::uintptr_t, std::uint32_t> peak_sites;
    drive_each(*a, t, [&](std::uint64_t done, std::span<block_ref const> blocks) {
      if (has_sites) {
        // A free forgets the slot's block, so that the next allocation of the slot takes its
        // own site even where it lands at the same address; an allocation the replay skipped
        // or could not serve leaves the slot as it was.
        trace::event const& e = t.events[done - 1];
        if (e.kind == trace::op::free) {
          slot_address[e.slot] = 0;
        } else if (e.kind == trace::op::alloc && blocks[e.slot].address != slot_address[e.slot]) {
          slot_address[e.slot] = blocks[e.slot].address;
          slot_site[e.slot] = t.event_sites[done - 1];
        }
        if (done == peaks[p])
          for (std::size_t slot = 0; slot < blocks.size(); ++slot)
            if (blocks[slot].address != 0) peak_sites[blocks[slot].address] = slot_site[slot];
      }
      if (next >= points.size() || done != points[next]) return;
      ++next;
      state& s = states.emplace_back();
      s.event = done;
      a->visit_chunks([&](chunk_view const& v) { s.chunks.push_back({v.address, v.size, v.requested, v.in_use, v.region_serial}); });
      std::sort(s.chunks.begin(), s.chunks.end(), [](chunk const& x, chunk const& y) { return x.address < y.address; });
    });
    packing const pack(states);

    out += (p ? "," : "");
    out += std::string("{\"name\":") + quoted_json(r.policy) + ",\"backend\":" + quoted_json(r.backend) +
           ",\"peak_event\":" + std::to_string(peaks[p]) + ",\"space\":" + std::to_string(pack.total) + ",\"series\":[";
    for (std::size_t i = 0; i < r.timeseries.size(); ++i) {
      timeseries_sample const& x = r.timeseries[i];
      out += (i ? ",[" : "[");
      out += std::to_string(x.event) + "," + std::to_string(x.max_live_bytes) + "," + std::to_string(x.allocated_bytes) +
             "," + std::to_string(x.max_reserved_bytes) + "]";
    }
    out += "],\"states\":[";
    for (std::size_t i = 0; i < states.size(); ++i) {
      state const& s = states[i];
      std::size_t free_chunks = 0, largest = 0, free_bytes = 0, reserved = 0;
      std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> regions;  // serial -> (size, free)
      for (chunk const& ch : s.chunks) {
        reserved += ch.size;
        regions[ch.region].first += ch.size;
        if (!ch.in_use) {
          ++free_chunks;
          largest = std::max(largest, ch.size);
          free_bytes += ch.size;
          regions[ch.region].second += ch.size;
        }
      }
      out += (i ? ",{" : "{");
      out += std::string("\"event\":") + std::to_string(s.event) + ",\"chunks\":" + std::to_string(s.chunks.size()) +
             ",\"free_chunks\":" + std::to_string(free_chunks) + ",\"largest_free\":" + std::to_string(largest) +
             ",\"free_bytes\":" + std::to_string(free_bytes) + ",\"reserved\":" + std::to_string(reserved) + ",\"region_count\":" + std::to_string(regions.size()) + ",\"regions\":[";
      std::vector<std::pair<std::size_t, std::size_t>> by_size;
      for (auto const& [serial, v] : regions) by_size.push_back(v);
      std::sort(by_size.begin(), by_size.end(), std::greater<>());
      for (std::size_t k = 0; k < by_size.size() && k < 12; ++k) {
        out += (k ? ",[" : "[");
        out += std::to_string(by_size[k].first) + "," + std::to_string(by_size[k].second) + "]";
      }
      // The map: each chunk, or buckets of the packed space with the share in use.
      out += "],\"segments\":[";
      if (s.chunks.size() <= o.max_segments) {
        for (std::size_t k = 0; k < s.chunks.size(); ++k) {
          out += (k ? ",[" : "[");
          out += std::to_string(pack.at(s.chunks[k].address)) + "," + std::to_string(s.chunks[k].size) + "," +
                 (s.chunks[k].in_use ? "100" : "0") + "]";
        }
      } else {
        std::uint64_t const bucket = std::max<std::uint64_t>(1, (pack.total + o.max_segments - 1) / o.max_segments);
        std::vector<std::uint64_t> held(o.max_segments + 1, 0), used(o.max_segments + 1, 0);
        for (chunk const& ch : s.chunks) {  // a chunk's bytes spread over the buckets it covers
          for (std::uint64_t from = pack.at(ch.address), left = ch.size; left > 0;) {
            std::uint64_t const b = from / bucket, take = std::min(left, (b + 1) * bucket - from);
            held[b] += take;
            if (ch.in_use) used[b] += take;
            from += take;
            left -= take;
          }
        }
        bool first = true;
        for (std::size_t b = 0; b < held.size(); ++b)
          if (held[b] != 0) {
            out += (first ? "[" : ",[");
            out += std::to_string(b * bucket) + "," + std::to_string(bucket) + "," +
                   std::to_string(used[b] * 100 / held[b]) + "]";
            first = false;
          }
      }
      out += "]}";
    }
    // At the peak: the largest free chunks, each with the blocks either side of it.
    out += "],\"peak_free\":[";
    auto const peak = std::find_if(states.begin(), states.end(), [&](state const& s) { return s.event == peaks[p]; });
    if (peak != states.end()) {
      std::vector<std::size_t> free;
      for (std::size_t k = 0; k < peak->chunks.size(); ++k)
        if (!peak->chunks[k].in_use) free.push_back(k);
      std::stable_sort(free.begin(), free.end(), [&](std::size_t x, std::size_t y) { return peak->chunks[x].size > peak->chunks[y].size; });
      auto const neighbour = [&](std::size_t k, int step) -> std::string {
        std::size_t const n = k + static_cast<std::size_t>(step);
        if (n >= peak->chunks.size() || peak->chunks[n].region != peak->chunks[k].region) return "null";
        chunk const& b = peak->chunks[n];
        std::size_t site = 0;
        if (auto const it = peak_sites.find(b.address); b.in_use && it != peak_sites.end()) {
          auto const [at, added] = shown_index.try_emplace(it->second, shown_sites.size());
          if (added) shown_sites.push_back(t.sites[it->second]);
          site = at->second;
        }
        std::string out = "[";
        out.append(std::to_string(b.size)).append(",").append(std::to_string(b.requested)).append(b.in_use ? ",1," : ",0,");
        return out.append(std::to_string(site)).append("]");
      };
      for (std::size_t k = 0; k < free.size() && k < o.peak_free_chunks; ++k) {
        chunk const& f = peak->chunks[free[k]];
        out += (k ? ",[" : "[");
        out += std::to_string(f.address) + "," + std::to_string(f.size) + "," +
               (free[k] == 0 ? "null" : neighbour(free[k], -1)) + "," + neighbour(free[k], 1) + "]";
      }
    }
    out += "]}";
  }
  out += "],\"sites\":[";
  for (std::size_t i = 0; i < shown_sites.size(); ++i) out.append(i ? "," : "").append(quoted_json(shown_sites[i]));
  return out + "]}";
}

}  // namespace fraglab
