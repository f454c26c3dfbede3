// The Python module `fraglab` (docs/python.md): traces read from any format or made from numpy
// arrays, and the command line's runs on them, returned as pandas DataFrames. Every check and
// every number comes from the code the command line runs (experiments/runtime/run/).
#include <fraglab/python/bindings.hpp>

#include "version.hpp"
#include <fraglab/runtime/io/input_error.hpp>

PYBIND11_MODULE(_core, m)
{
  namespace py = pybind11;
  m.doc() = "fraglab: replay allocation traces under swappable allocation policies and measure fragmentation.";
  // A malformed input: its message names the file and place (FILE:LINE: what was expected).
  py::register_exception<fraglab::input_error>(m, "InputError", PyExc_ValueError)
      .doc() = "A malformed input file (a ValueError): the message names the file and the place (FILE:LINE or byte offset) and what "
               "was expected there, as the command line's does.";
  fraglab::python::bind_traces(m);
  fraglab::python::bind_runs(m);
  fraglab::python::bind_policies(m);
  fraglab::python::bind_command(m);
  m.attr("__version__") = FRAGLAB_VERSION;
  m.attr("__commit__") = FRAGLAB_COMMIT;  // the commit it was built from, for results to record
}
