// The pieces of the Python module `fraglab` (docs/python.md), each bound in its own file,
// and what they share: the lock released while C++ runs, and tables as DataFrames.
#pragma once

#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <initializer_list>
#include <string>
#include <utility>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

namespace fraglab::python {

namespace py = pybind11;

void bind_traces(py::module_& m);    // Trace, read_trace(s), Trace.from_arrays
void bind_runs(py::module_& m);      // replay, sweep, capacity, info, verify, plan
void bind_policies(py::module_& m);  // policies, policy, parameters
void bind_command(py::module_& m);   // run: any command, its table returned

// A table of the command line's cells as a pandas DataFrame, each column typed by what all
// its cells hold: integers (int64), numbers (float64, NaN where empty), yes/no (bool), else
// text; `text_columns` stay text whatever they hold (names, not numbers).
py::object data_frame(results_table const& table);

// Whether `arg` names a file (a str or an os.PathLike), and its path as text.
bool is_path(py::handle arg);
std::string path_text(py::handle path);

// A whole number in [least, most], refused in the command line's words (parse_count), never
// a cast error or a silent wrap, whatever the Python int's size or the value's type.
std::uint64_t whole_value(char const* name, py::handle value, std::uint64_t least, std::uint64_t most);

// `device=`: None, a PyTorch device's number, or a TF allocator's name (`--device`'s choice).
std::optional<trace::allocator_choice> allocator_argument(py::handle device);

// A dict of (name, column) in order: a DataFrame's or to_arrays' columns.
py::dict columns_of(std::initializer_list<std::pair<char const*, py::object>> columns);

// Traces named by `arg`: a Trace, a path (every device of a snapshot), or a list of these.
// The Python objects that own them must outlive the run: `owners` keeps them.
std::vector<trace::trace const*> traces_argument(py::handle arg, std::vector<std::shared_ptr<trace::trace const>>& owners);

// Runs `work(stop)` on a thread of its own with the interpreter's lock released, so that
// other Python threads run meanwhile, and polls for signals every 50 ms: Ctrl-C sets `stop`,
// which the replays read after every batch of events (replay_options::stop), and raises
// KeyboardInterrupt once the work has stopped.
template <class Work>
auto without_lock(Work&& work)
{
  using result_type = std::invoke_result_t<Work&, std::atomic<bool> const*>;
  std::atomic<bool> stop{false};
  std::optional<result_type> result;
  std::exception_ptr failure;
  bool interrupted = false;
  {
    py::gil_scoped_release unlocked;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::thread worker([&] {
      try {
        result.emplace(work(&stop));
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done = true;
      finished.notify_one();
    });
    for (;;) {
      {
        std::unique_lock lock(mutex);
        if (finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) break;
      }
      if (interrupted) continue;
      py::gil_scoped_acquire locked;
      if (PyErr_CheckSignals() != 0) {  // the handler raised (KeyboardInterrupt): it stays set
        interrupted = true;
        stop = true;
      }
    }
    worker.join();
  }
  if (interrupted) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

}  // namespace fraglab::python
