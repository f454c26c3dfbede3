// A progress bar on standard error for long runs, redrawn a few times a second by its own
// thread, so that the workers only add to an atomic counter (once per batch of events).
// Drawn only when standard error is a terminal: logs and pipes get nothing.
//
// The bar fills by units of work (events times passes); the count beside it is in what the
// user asked for: the cells of a run of several, else the events of the trace (work divided
// by the passes over it), or the steps of a bisection, whose total grows as each cell learns
// how many it needs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace fraglab {

class progress_meter {
 public:
  // `total` units of work, counted as work / `per_shown` `unit` ("events") or, with `cells`
  // > 1, as cells done of `cells`; `enabled` false draws nothing.
  progress_meter(std::uint64_t total, std::string unit, bool enabled, std::uint64_t per_shown = 1, std::uint64_t cells = 0);
  progress_meter(progress_meter const&) = delete;
  progress_meter& operator=(progress_meter const&) = delete;
  ~progress_meter() { finish(); }

  // Stops drawing and clears the line: call it before printing results to the same terminal.
  void finish();

  void add(std::uint64_t done) noexcept { done_.fetch_add(done, std::memory_order_relaxed); }
  void add_total(std::uint64_t more) noexcept { total_.fetch_add(more, std::memory_order_relaxed); }
  void cell_done() noexcept { cells_done_.fetch_add(1, std::memory_order_relaxed); }

  // True when standard error is a terminal.
  static bool stderr_is_terminal() noexcept;

 private:
  void draw() const;

  std::atomic<std::uint64_t> total_;
  std::string unit_;
  std::uint64_t per_shown_;
  std::uint64_t cells_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> cells_done_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread painter_;
};

}  // namespace fraglab
