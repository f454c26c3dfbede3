// What `fraglab view` draws, as JSON: for each policy over one trace, its live, allocated and
// reserved bytes over time (the replay's samples), and its allocator's state at events spread
// evenly over the trace and at each policy's peak of reserved bytes: every chunk (or, past
// `max_segments`, address buckets with the share of them in use), the chunk count, the free
// chunks, the largest free chunk and each region's free bytes, as `fraglab dump --at N`
// reports them. At a policy's peak, its largest free chunks with the blocks on either side,
// which hold them in place, and where the trace records them (a snapshot's stack frames), the
// call sites that allocated those blocks.
#pragma once

#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fraglab {

struct view_options {
  std::size_t states = 60;          // events spread evenly, besides each policy's peak
  std::vector<std::uint64_t> at;    // and these events (1 .. the trace's events)
  std::size_t max_segments = 2000;  // chunks drawn per state before they are bucketed
  std::size_t peak_free_chunks = 15;
};

// The page is capped so that a browser opens it and memory stays bounded: at most
// `page_chunks` chunks and buckets in all its states. Lowers o.max_segments so that every
// state of every policy fits (states + at + each peak), down to `fewest_buckets` a state;
// throws std::invalid_argument, naming --states, where even that would not fit.
inline constexpr std::size_t page_chunks = 1'500'000;  // about 40 MB of page
inline constexpr std::size_t fewest_buckets = 50;
void fit_page(view_options& o, std::size_t policies);

std::string view_data_json(trace::trace const& t, std::vector<composition const*> const& policies, view_options const& o = {});

}  // namespace fraglab
