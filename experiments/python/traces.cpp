// fraglab.Trace: a trace read from any format the command line reads, or made from numpy
// arrays; the events stay in C++ (docs/python.md, "Traces").
#include <fraglab/python/bindings.hpp>

#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/write_trace.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace fraglab::python {
namespace {

using trace_ptr = std::shared_ptr<trace::trace>;

// A column of `from_arrays` as unsigned 64-bit integers: integers only (a float size is a
// mistake, not a size), none negative, `n` of them.
py::array_t<std::uint64_t, py::array::c_style> unsigned_column(py::handle values, char const* name, std::size_t n)
{
  py::array const given = py::array::ensure(values);
  if (!given) throw py::type_error(std::string(name) + ": expected an array of integers");
  char const kind = given.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(std::string(name) + ": expected an array of integers, got dtype " + std::string(py::str(given.dtype())));
  if (given.ndim() != 1) throw std::invalid_argument(std::string(name) + ": expected a one-dimensional array");
  if (static_cast<std::size_t>(given.size()) != n)
    throw std::invalid_argument(std::string(name) + ": expected " + std::to_string(n) + " values (as many as kind), got " +
                                std::to_string(given.size()));
  if (kind == 'i') {
    auto const as_signed = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(given);
    std::int64_t const* v = as_signed.data();
    for (std::size_t i = 0; i < n; ++i)
      if (v[i] < 0) throw std::invalid_argument(std::string(name) + "[" + std::to_string(i) + "]: expected at least 0, got " + std::to_string(v[i]));
  }
  return py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(given);
}

// `device`: a number, or an array of one per event that must name one device throughout (a
// trace is one device's allocator).
int device_of(py::handle device, std::size_t n)
{
  if (py::isinstance<py::int_>(device)) return static_cast<int>(whole_value("device", device, 0, std::numeric_limits<int>::max()));
  auto const each = unsigned_column(device, "device", n);
  std::uint64_t const* v = each.data();
  for (std::size_t i = 1; i < n; ++i)
    if (v[i] != v[0])
      throw std::invalid_argument("device[" + std::to_string(i) + "]: " + std::to_string(v[i]) + " where device[0] is " +
                                  std::to_string(v[0]) + ": a trace is one device's allocator; make a Trace of each device's events");
  if (n > 0 && v[0] > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("device: expected a device number, got " + std::to_string(v[0]));
  return n == 0 ? 0 : static_cast<int>(v[0]);
}

trace_ptr from_arrays(py::handle kind, py::handle id, py::handle size, py::handle alignment, py::handle stream, py::handle device_given,
                      std::string const& name)
{
  py::array const kinds_given = py::array::ensure(kind);
  if (!kinds_given) throw py::type_error("kind: expected an array of integers");
  if (kinds_given.ndim() != 1) throw std::invalid_argument("kind: expected a one-dimensional array");
  std::size_t const n = static_cast<std::size_t>(kinds_given.size());
  auto const kinds = unsigned_column(kind, "kind", n);
  auto const ids = unsigned_column(id, "id", n);
  auto const sizes = unsigned_column(size, "size", n);
  std::optional<py::array_t<std::uint64_t, py::array::c_style>> alignments, streams;
  if (!alignment.is_none()) alignments = unsigned_column(alignment, "alignment", n);
  if (!stream.is_none()) streams = unsigned_column(stream, "stream", n);
  int const device = device_of(device_given, n);

  auto t = std::make_shared<trace::trace>();
  t->name = name;
  t->source_format = "numpy arrays";
  t->device = device;
  std::uint64_t const* k = kinds.data();
  std::uint64_t const* ident = ids.data();
  std::uint64_t const* bytes = sizes.data();
  std::uint64_t const* align = alignments ? alignments->data() : nullptr;
  std::uint64_t const* on = streams ? streams->data() : nullptr;
  {
    py::gil_scoped_release unlocked;
    t->events.reserve(n);
    // Slots as the readers number them: the n-th distinct id seen.
    std::unordered_map<std::uint64_t, std::uint32_t> slots;
    slots.reserve(n / 2 + 1);
    auto const slot_of = [&](std::size_t i) {
      auto const [at, fresh] = slots.try_emplace(ident[i], static_cast<std::uint32_t>(slots.size()));
      if (fresh && slots.size() > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("id: more than 2^32 distinct ids");
      return at->second;
    };
    auto const at = [](std::size_t i) { return "[" + std::to_string(i) + "]"; };
    for (std::size_t i = 0; i < n; ++i) {
      switch (k[i]) {
        case 0: {
          trace::event e{trace::op::alloc, slot_of(i)};
          e.size = bytes[i];
          if (e.size == 0) throw std::invalid_argument("size" + at(i) + ": expected a size of at least 1 byte, got 0");
          if (align != nullptr) {
            e.alignment = align[i];
            if (e.alignment == 0 || (e.alignment & (e.alignment - 1)) != 0)
              throw std::invalid_argument("alignment" + at(i) + ": expected a power of two, got " + std::to_string(e.alignment));
          }
          if (on != nullptr) e.stream = on[i];
          t->events.push_back(e);
          ++t->allocs;
          break;
        }
        case 1:
          t->events.push_back(trace::event{trace::op::free, slot_of(i)});
          ++t->frees;
          break;
        case 2:
          t->events.push_back(trace::event{trace::op::release, 0});
          ++t->releases;
          break;
        default:
          throw std::invalid_argument("kind" + at(i) + ": expected 0 (fraglab.ALLOC), 1 (fraglab.FREE) or 2 (fraglab.RELEASE), got " +
                                      std::to_string(k[i]));
      }
    }
    t->slots = slots.size();
    trace::give_releases_a_slot(*t);
  }
  return t;
}

// Every event as columns: kind, id (the trace's dense slot), size, alignment, stream.
py::dict to_arrays(trace::trace const& t)
{
  auto const n = static_cast<py::ssize_t>(t.event_count());
  py::array_t<std::uint8_t> kind(n);
  py::array_t<std::uint64_t> id(n), size(n), alignment(n), stream(n);
  auto* k = kind.mutable_data();
  auto* i = id.mutable_data();
  auto* s = size.mutable_data();
  auto* a = alignment.mutable_data();
  auto* st = stream.mutable_data();
  {
    py::gil_scoped_release unlocked;
    std::size_t at = 0;
    trace::for_each_event(t, [&](trace::event const& e) {
      k[at] = static_cast<std::uint8_t>(e.kind);
      i[at] = e.slot;
      s[at] = e.kind == trace::op::alloc ? e.size : 0;
      a[at] = e.kind == trace::op::alloc ? e.alignment : 0;
      st[at] = e.kind == trace::op::alloc ? e.stream : 0;
      ++at;
    });
  }
  return columns_of({{"kind", kind}, {"id", id}, {"size", size}, {"alignment", alignment}, {"stream", stream}});
}

}  // namespace

std::string path_text(py::handle path) { return py::str(py::module_::import("os").attr("fspath")(path)); }

namespace {

// Every trace of a file (a snapshot's devices, or `device`'s), read with the lock released.
std::vector<trace_ptr> read_file(std::string const& path, std::optional<trace::allocator_choice> const& which)
{
  py::gil_scoped_release unlocked;
  std::vector<trace_ptr> out;
  for (trace::trace& t : trace::read_traces(path, which)) out.push_back(std::make_shared<trace::trace>(std::move(t)));
  return out;
}

}  // namespace

std::uint64_t whole_value(char const* name, py::handle value, std::uint64_t least, std::uint64_t most)
{
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
    throw std::invalid_argument(std::string(name) + ": expected a whole number, got " + std::string(py::str(py::type::of(value).attr("__name__"))));
  return parse_count(name, std::string(py::str(value)), least, most);
}

std::optional<trace::allocator_choice> allocator_argument(py::handle device)
{
  if (device.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(device)) return trace::allocator_choice::parse(device.cast<std::string>());
  if (py::isinstance<py::int_>(device) && !py::isinstance<py::bool_>(device))
    return trace::allocator_choice(static_cast<int>(whole_value("device", device, 0, std::numeric_limits<int>::max())));
  throw std::invalid_argument("device: expected a device number or a TF allocator's name, got " + std::string(py::str(py::type::of(device).attr("__name__"))));
}

bool is_path(py::handle arg) { return py::isinstance<py::str>(arg) || py::hasattr(arg, "__fspath__"); }

py::dict columns_of(std::initializer_list<std::pair<char const*, py::object>> columns)
{
  py::dict out;
  for (auto const& [name, column] : columns) out[name] = column;
  return out;
}

std::vector<trace::trace const*> traces_argument(py::handle arg, std::vector<std::shared_ptr<trace::trace const>>& owners)
{
  std::vector<trace::trace const*> traces;
  auto const add = [&](py::handle one) {
    if (py::isinstance<trace::trace>(one)) {
      owners.push_back(one.cast<trace_ptr>());
    } else if (is_path(one)) {
      for (trace_ptr& t : read_file(path_text(one), std::nullopt)) owners.push_back(std::move(t));
    } else {
      throw py::type_error("expected a fraglab.Trace or a path, got " + std::string(py::str(py::type::of(one).attr("__name__"))));
    }
  };
  std::size_t const before = owners.size();
  if (py::isinstance<trace::trace>(arg) || is_path(arg)) add(arg);
  else
    for (py::handle one : py::iter(arg)) add(one);
  for (std::size_t i = before; i < owners.size(); ++i) traces.push_back(owners[i].get());
  if (traces.empty()) throw std::invalid_argument("no trace given");
  // Rows name a trace by its name: two of one name would be rows no reader could tell apart.
  for (std::size_t i = 0; i < traces.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (traces[i]->name == traces[j]->name)
        throw std::invalid_argument("two traces are named " + traces[i]->name + ", which labels their rows: give one another name");
  return traces;
}

void bind_traces(py::module_& m)
{
  m.attr("ALLOC") = 0;
  m.attr("FREE") = 1;
  m.attr("RELEASE") = 2;
  py::class_<trace::trace, trace_ptr>(m, "Trace",
                                      R"(A trace of allocations, frees and cache releases of one allocator, held in C++.

Read one with fraglab.read_trace or read_traces, or make one with Trace.from_arrays; pass it to
any run without copying its events. len(trace) is its number of events.)")
      .def_static("from_arrays", &from_arrays, py::arg("kind"), py::arg("id"), py::arg("size"), py::arg("alignment") = py::none(),
                  py::arg("stream") = py::none(), py::arg("device") = 0, py::arg("name") = "arrays",
                  R"(A trace from equal-length integer arrays, one event each.

Args:
    kind: fraglab.ALLOC, FREE or RELEASE (0, 1, 2; a release empties the cache).
    id: a whole number from 0 to 2**64 - 1 naming the allocation; a free names its
        allocation's id (one never allocated is kept, and a replay counts it in unknown_frees).
    size: bytes, at least 1 for an allocation (ignored for the others).
    alignment: bytes, powers of two (default: 1).
    stream: the stream each event is on (default: 0).
    device: the device the trace is of: a number, or an array naming one device throughout (a
        trace is one allocator's).
    name: how rows name the trace.

Returns:
    The Trace.

Raises:
    ValueError: arrays of unequal lengths, a negative value, an allocation of 0 bytes, an
        alignment not a power of two, or two devices; the message names the array and index.
    TypeError: an argument that is not an array of integers.)")
      .def("to_arrays", &to_arrays, R"(Every event as numpy arrays.

Returns:
    {'kind': uint8 (fraglab.ALLOC, FREE, RELEASE), 'id': uint64 (dense: the n-th distinct
    allocation), 'size', 'alignment', 'stream': uint64}, one element an event.)")
      .def(
          "write",
          [](trace::trace const& t, py::handle path, std::string const& to) {
            std::string const p = path_text(path);
            auto const format = trace::output_trace_format(p, to);
            py::gil_scoped_release unlocked;
            trace::write_trace(p, t, format, "written by fraglab's Python module from " + t.name);
          },
          py::arg("path"), py::arg("to") = "",
          R"(Writes the trace as `fraglab convert` does, for the command line to read.

The file changes only when all of it is written.

Args:
    path: the file to write.
    to: 'text', 'binary' or 'rmm-csv' (default: from the extension: .fbin binary, .csv RMM
        CSV, else text).

Raises:
    ValueError: an unknown format, or a file that cannot be written (the message says why).
    TypeError: an argument of the wrong type.)")
      .def_property_readonly("name", [](trace::trace const& t) { return t.name; }, "How rows name the trace: its file's name, or the name given to from_arrays.")
      .def_property_readonly("events", &trace::trace::event_count, "The number of events: allocations, frees and cache releases.")
      .def_property_readonly("allocs", [](trace::trace const& t) { return t.allocs; }, "The number of allocations.")
      .def_property_readonly("frees", [](trace::trace const& t) { return t.frees; }, "The number of frees (each names an allocation).")
      .def_property_readonly("releases", [](trace::trace const& t) { return t.releases; }, "The number of cache releases (PyTorch's empty_cache).")
      .def_property_readonly("recorded_failures", [](trace::trace const& t) { return t.recorded_failures; }, "Allocations the recorded program saw fail (an OOM in a snapshot); not replayed.")
      .def_property_readonly("device", [](trace::trace const& t) { return t.device; }, "The device the trace was recorded on (a snapshot's cuda:N).")
      .def_property_readonly("allocator", [](trace::trace const& t) { return t.allocator; }, "The TensorFlow allocator a BFC log's trace was recorded from (GPU_0_bfc, ...); '' otherwise.")
      .def_property_readonly("format", [](trace::trace const& t) { return t.source_format.empty() ? std::string("native text") : t.source_format; }, "The format it was read from ('native text', 'PyTorch snapshot', ...).")
      .def_property_readonly("recorded_settings", [](trace::trace const& t) { return t.recorded_settings; }, "The allocator settings a PyTorch snapshot was recorded with, as PYTORCH_CUDA_ALLOC_CONF writes them; '' otherwise.")
      .def("__len__", &trace::trace::event_count)
      .def("__repr__", [](trace::trace const& t) {
        return "<fraglab.Trace " + t.name + ": " + std::to_string(t.event_count()) + " events, " + std::to_string(t.allocs) +
               " allocations>";
      });

  m.def(
      "read_traces",
      [](py::handle path, py::handle device) { return read_file(path_text(path), allocator_argument(device)); },
      py::arg("path"), py::arg("device") = py::none(),
      R"(Every trace in a file of any format `fraglab` reads: native text or binary, RMM's CSV, a
PyTorch memory snapshot, a TensorFlow BFC log; gzip or zstd compressed.

Args:
    path: the file.
    device: N, one device of a PyTorch snapshot, or 'NAME', one allocator of a TensorFlow BFC
        log (default: all).

Returns:
    A list of Traces: one for most files, one a device of a snapshot, one an allocator of a TF
    log.

Raises:
    fraglab.InputError: a malformed file; the message names the file and place (line or byte)
        and what was expected there.
    ValueError: a missing file, or a device the file does not hold.
    TypeError: an argument of the wrong type.)");
  m.def(
      "read_trace",
      [](py::handle path, py::handle device) {
        std::string const p = path_text(path);
        std::vector<trace_ptr> read = read_file(p, allocator_argument(device));
        if (read.size() != 1)
          throw std::invalid_argument(p + ": holds " + std::to_string(read.size()) +
                                      " traces (a snapshot's devices, a TF log's allocators): give device=N or device='NAME', or use "
                                      "fraglab.read_traces");
        return read.front();
      },
      py::arg("path"), py::arg("device") = py::none(),
      R"(The trace in a file of any format `fraglab` reads (see read_traces).

Args:
    path: the file.
    device: N, one device of a PyTorch snapshot, or 'NAME', one allocator of a TensorFlow BFC
        log; needed where the file holds more than one.

Returns:
    The Trace.

Raises:
    fraglab.InputError: a malformed file; the message names the file and place (line or byte)
        and what was expected there.
    ValueError: a missing file, a file of several traces without device, or a device the file
        does not hold.
    TypeError: an argument of the wrong type.)");
}

}  // namespace fraglab::python
