// Builds a generated trace event by event. Ids are recycled as programs recycle addresses,
// so a generated trace needs as many slots as it has blocks live at once. Given a writer,
// the events go to it a batch at a time, so that generating needs memory for the blocks
// live at once, not for the trace.
#pragma once

#include <fraglab/runtime/gen/rng.hpp>
#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fraglab::gen::detail {

// A generated tensor is at most this large. The generators' sizes are products of their
// parameters in 64 bits, which would wrap without a word; each generator checks up front
// that its largest product stays under this (fits_in_largest_tensor), and the builder that
// the bytes live at once do not wrap either.
inline constexpr std::uint64_t largest_tensor_bytes = std::uint64_t{1} << 50;  // 1 PiB

// Whether the product of `factors` and the widest element (8 bytes: int64 token ids) stays
// within largest_tensor_bytes.
inline bool fits_in_largest_tensor(std::initializer_list<std::uint64_t> factors) noexcept
{
  std::uint64_t bytes = 8;
  for (std::uint64_t f : factors)
    if (__builtin_mul_overflow(bytes, f, &bytes)) return false;
  return bytes <= largest_tensor_bytes;
}

class trace_builder {
 public:
  // Without a writer, take() returns the events; with one, only the name and counts.
  explicit trace_builder(std::string name, trace::trace_writer* out = nullptr) : out_(out) { t_.name = std::move(name); }

  std::uint32_t alloc(std::size_t size, std::size_t alignment = 1)
  {
    std::uint64_t live = 0;
    if (__builtin_add_overflow(live_bytes_, size, &live))
      throw std::invalid_argument(t_.name + ": more than 2^64 bytes would be live at once");
    std::uint32_t id;
    if (!recycled_.empty()) {
      id = recycled_.back();
      recycled_.pop_back();
    } else {
      id = static_cast<std::uint32_t>(t_.slots++);
      size_of_.push_back(0);
    }
    live_bytes_ = live;
    size_of_[id] = size;
    push({trace::op::alloc, id, size, alignment});
    ++t_.allocs;
    return id;
  }

  void free(std::uint32_t id)
  {
    live_bytes_ -= size_of_[id];
    push({trace::op::free, id});
    ++t_.frees;
    recycled_.push_back(id);
  }

  void free_all(std::vector<std::uint32_t>& ids)
  {
    for (std::uint32_t id : ids) free(id);
    ids.clear();
  }

  trace::trace take()
  {
    flush();
    return std::move(t_);
  }

 private:
  void push(trace::event const& e)
  {
    t_.events.push_back(e);
    if (out_ != nullptr && t_.events.size() == trace::event_batches::batch_size) flush();
  }

  void flush()
  {
    if (out_ == nullptr) return;
    out_->write(t_.events);
    t_.events.clear();
  }

  trace::trace t_;
  trace::trace_writer* out_;
  std::vector<std::uint32_t> recycled_;
  std::vector<std::uint64_t> size_of_;  // by id, while live
  std::uint64_t live_bytes_ = 0;
};

template <class T>
void shuffle(std::vector<T>& v, rng& r)
{
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[r.uniform(0, i - 1)]);
}

}  // namespace fraglab::gen::detail
