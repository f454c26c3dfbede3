// A progress bar on standard error for long runs, redrawn a few times a second by its own
// thread, so that the workers only add to an atomic counter (once per batch of events).
// Drawn only when standard error is a terminal: logs and pipes get nothing.
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
  // `total` units of work named `unit` ("events", "cells"); `enabled` false draws nothing.
  progress_meter(std::uint64_t total, std::string unit, bool enabled);
  progress_meter(progress_meter const&) = delete;
  progress_meter& operator=(progress_meter const&) = delete;
  ~progress_meter() { finish(); }

  // Stops drawing and clears the line: call it before printing results to the same terminal.
  void finish();

  void add(std::uint64_t done) noexcept { done_.fetch_add(done, std::memory_order_relaxed); }

  // True when standard error is a terminal.
  static bool stderr_is_terminal() noexcept;

 private:
  void draw() const;

  std::uint64_t total_;
  std::string unit_;
  std::atomic<std::uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread painter_;
};

}  // namespace fraglab
