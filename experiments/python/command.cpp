// fraglab.run(["replay", ...]): any command of the command line, in this process, its table
// returned rather than written: what the results scripts run.
#include <fraglab/python/bindings.hpp>

#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>

#include <boost/program_options/errors.hpp>
#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>

namespace fraglab::python {

void bind_command(py::module_& m)
{
  m.def(
      "run",
      [](std::vector<std::string> const& args, bool text) -> py::object {
        if (args.empty()) throw std::invalid_argument("no command given (run([\"replay\", TRACE, \"-p\", POLICY]))");
        for (std::string const& a : args)
          if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0 || (a.rfind("-o", 0) == 0 && a.size() > 2))
            throw std::invalid_argument("run returns the table: leave out -o/--output");
        rows_table table;
        int status = 0;
        {
          py::gil_scoped_release unlocked;
          // The sink is the calling thread's; commands that run cells on threads write once,
          // on it.
          struct restore {
            rows_table* before = cli::table_sink();
            ~restore() { cli::table_sink() = before; }
          } const guard;
          cli::table_sink() = &table;
          try {
            status = cli::run_command(args.front(), {args.begin() + 1, args.end()});
          } catch (boost::program_options::error const& e) {
            throw std::invalid_argument("fraglab " + args.front() + ": " + e.what());
          }
        }
        if (status != 0)
          throw std::runtime_error("fraglab " + args.front() + " exited " + std::to_string(status) + " (its message is on standard error)");
        if (!text) return data_frame({table.columns, table.rows});
        py::list rows;
        for (auto const& row : table.rows) {
          py::dict d;
          for (std::size_t c = 0; c < table.columns.size(); ++c) d[py::str(table.columns[c])] = py::str(row[c]);
          rows.append(d);
        }
        return rows;
      },
      py::arg("args"), py::arg("text") = false,
      R"(Runs any command of `fraglab` in this process and returns the table it would write.

What the command prints besides its table goes where it would.

Args:
    args: the command line after `fraglab`, without -o ('replay', 'run.trace', '-p', 'tlsf').
    text: return the cells as CSV writes them, not typed.

Returns:
    The table as a DataFrame (every column raw, as CSV), or with text=True a list of dicts of
    its cells, a dict a row.

Raises:
    RuntimeError: the command exited non-zero; its message is on standard error.
    ValueError: an unknown command or option, a bad value, or -o given.
    fraglab.InputError: a malformed input file; the message names the file and place.)");
}

}  // namespace fraglab::python
