// Runs independent cells of an experiment (one trace under one allocator with one parameter
// set each) on N threads. Every cell writes only its own slot of the result, and results are
// returned in cell order, so the output of `--jobs N` equals that of `--jobs 1` apart from
// timing columns.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fraglab {

template <class Result>
std::vector<Result> run_cells(std::size_t count, unsigned jobs, std::function<Result(std::size_t)> const& cell)
{
  std::vector<Result> results(count);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        results[i] = cell(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = count;  // stop handing out cells
      }
    }
  };
  unsigned const threads = jobs == 0 ? 1 : jobs;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < count; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace fraglab
