#include <fraglab/runtime/io/progress_meter.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace fraglab {

progress_meter::progress_meter(std::uint64_t total, std::string unit, bool enabled, std::uint64_t per_shown,
                               std::uint64_t cells)
    : total_(total), unit_(std::move(unit)), per_shown_(std::max<std::uint64_t>(per_shown, 1)), cells_(cells),
      start_(std::chrono::steady_clock::now())
{
  if (!enabled || total == 0) return;
  painter_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    draw();  // at once: a run that ends within the first period still shows its start
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; })) draw();
  });
}

void progress_meter::finish()
{
  if (!painter_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  painter_.join();
  std::fprintf(stderr, "\r\033[K");  // leave the terminal as it was
  std::fflush(stderr);
}

bool progress_meter::stderr_is_terminal() noexcept { return ::isatty(STDERR_FILENO) == 1; }

void progress_meter::draw() const
{
  std::uint64_t const total = total_.load(std::memory_order_relaxed);
  std::uint64_t const done = std::min(done_.load(std::memory_order_relaxed), total);
  double const fraction = static_cast<double>(done) / static_cast<double>(total);
  double const elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  constexpr int width = 30;
  int const filled = static_cast<int>(fraction * width);
  char bar[width + 1];
  for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  char eta[32] = "";
  if (done > 0 && done < total_) std::snprintf(eta, sizeof eta, ", %.0f s left", elapsed / fraction - elapsed);
  bool const by_cell = cells_ > 1;
  auto const shown = static_cast<unsigned long long>(by_cell ? cells_done_.load(std::memory_order_relaxed) : done / per_shown_);
  auto const of = static_cast<unsigned long long>(by_cell ? cells_ : total / per_shown_);
  std::fprintf(stderr, "\r[%s] %3.0f%%  %llu/%llu %s  %.0f s%s\033[K", bar, fraction * 100.0, shown, of,
               by_cell ? "cells" : unit_.c_str(), elapsed, eta);
  std::fflush(stderr);
}

}  // namespace fraglab
