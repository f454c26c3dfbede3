// Runs independent cells of an experiment (one trace under one allocator with one parameter
// set each) on N threads. Every cell writes only its own slot of the result, and results are
// returned in cell order, so the output of `--jobs N` equals that of `--jobs 1` apart from
// timing columns.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
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
  // More threads than cores or cells only cost memory (a stack each): `--jobs 100000` under
  // a memory limit could not create them. A thread the system refuses is done without; the
  // calling thread is always one.
  unsigned const cores = std::max(1u, std::thread::hardware_concurrency());
  std::size_t const threads = std::min<std::size_t>({jobs == 0 ? 1 : jobs, cores, count});
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (std::system_error const&) {
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace fraglab
