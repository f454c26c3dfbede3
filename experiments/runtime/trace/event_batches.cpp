#include <fraglab/runtime/trace/event_batches.hpp>

#include <algorithm>

namespace fraglab::trace {
namespace {

class memory_batches final : public event_batches {
 public:
  explicit memory_batches(std::vector<event> const& events) : rest_(events) {}

  std::span<event const> next() override
  {
    std::span<event const> const b = rest_.first(std::min(rest_.size(), batch_size));
    rest_ = rest_.subspan(b.size());
    return b;
  }

 private:
  std::span<event const> rest_;
};

}  // namespace

std::unique_ptr<event_batches> memory_events(std::vector<event> const& events) { return std::make_unique<memory_batches>(events); }

}  // namespace fraglab::trace
