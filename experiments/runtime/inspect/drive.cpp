#include <fraglab/runtime/inspect/drive.hpp>

#include <fraglab/runtime/trace/event_batches.hpp>

#include <vector>

namespace fraglab {
namespace {

template <class AfterEach>
std::uint64_t run(any_allocator& a, trace::trace const& t, std::uint64_t events, std::vector<block_ref>& block, AfterEach&& after_each)
{
  block.assign(t.slots, block_ref{});
  std::vector<bool> live(t.slots, false);
  // As the replay does: a start the allocator can hold is restored, and stands for the events
  // that allocate it.
  std::uint64_t const restored = a.restore_start(t, block);
  for (std::size_t i = 0; i < block.size(); ++i) live[i] = block[i].address != 0;
  std::uint64_t done = 0;
  auto batches = trace::open_events(t);
  for (auto batch = batches->next(); !batch.empty() && done < events; batch = batches->next())
    for (trace::event const& e : batch) {
      if (done == events) break;
      ++done;
      if (done <= restored) {
        after_each(done, std::span<block_ref const>(block));
        continue;
      }
      if (e.kind == trace::op::alloc) {
        if (!live[e.slot]) {
          allocation const got = a.allocate(e.size, e.alignment, e.stream);
          if (got) {
            block[e.slot] = got.block();
            live[e.slot] = true;
          }
        }
      } else if (e.kind == trace::op::release) {
        (void)a.release_free_regions();
      } else if (live[e.slot]) {
        live[e.slot] = false;
        a.deallocate(block[e.slot]);
        block[e.slot] = {};
      }
      after_each(done, std::span<block_ref const>(block));
    }
  return done;
}

}  // namespace

std::uint64_t drive(any_allocator& a, trace::trace const& t, std::uint64_t events)
{
  std::vector<block_ref> blocks;
  return drive(a, t, events, blocks);
}

std::uint64_t drive(any_allocator& a, trace::trace const& t, std::uint64_t events, std::vector<block_ref>& blocks)
{
  return run(a, t, events, blocks, [](std::uint64_t, std::span<block_ref const>) {});
}

void drive_each(any_allocator& a, trace::trace const& t,
                std::function<void(std::uint64_t, std::span<block_ref const>)> const& after_each)
{
  std::vector<block_ref> blocks;
  (void)run(a, t, all_events, blocks, after_each);
}

std::uint64_t events_to_peak_reserved(composition const& c, trace::trace const& t)
{
  auto a = c.make();
  std::size_t peak = 0;
  std::uint64_t at = 0;
  std::vector<block_ref> blocks;
  run(*a, t, all_events, blocks, [&](std::uint64_t done, std::span<block_ref const>) {
    std::size_t const reserved = a->counters().reserved_bytes;
    if (reserved > peak) {
      peak = reserved;
      at = done;
    }
  });
  return at;
}

}  // namespace fraglab
