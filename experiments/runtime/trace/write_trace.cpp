#include <fraglab/runtime/trace/write_trace.hpp>

#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/trace/native_binary.hpp>
#include <fraglab/runtime/trace/native_text.hpp>
#include <fraglab/runtime/trace/rmm_csv.hpp>

#include <stdexcept>

namespace fraglab::trace {
trace_format output_trace_format(std::string const& path, std::string_view requested)
{
  if (requested == "text") return trace_format::native_text;
  if (requested == "binary") return trace_format::native_binary;
  if (requested == "rmm-csv") return trace_format::rmm_csv;
  if (!requested.empty())
    throw std::invalid_argument("--to: expected text, binary or rmm-csv, got '" + std::string(requested) + "'");
  if (path.ends_with(".fbin")) return trace_format::native_binary;
  if (path.ends_with(".csv")) return trace_format::rmm_csv;
  return trace_format::native_text;
}

std::unique_ptr<trace_writer> make_trace_writer(std::ostream& out, trace_format f, std::string const& comment)
{
  switch (f) {
    case trace_format::native_text: return native_text_writer(out, comment);
    case trace_format::native_binary: return native_binary_writer(out);
    case trace_format::rmm_csv: return rmm_csv_writer(out);
    case trace_format::pytorch_snapshot: throw std::invalid_argument("PyTorch snapshots can be read, not written");
    case trace_format::tf_bfc_log: break;
  }
  throw std::invalid_argument("TensorFlow BFC logs can be read, not written");
}

namespace {

// What a format cannot hold (RMM CSV has no alignment) is reported against the file; what
// `produce` refuses is its own business.
class file_naming_writer final : public trace_writer {
 public:
  file_naming_writer(trace_writer& w, std::string const& path) : w_(w), path_(path) {}
  void write(std::span<event const> events) override { named([&] { w_.write(events); }); }
  void finish(trace const& summary) override { named([&] { w_.finish(summary); }); }

 private:
  template <class F>
  void named(F&& f)
  {
    try {
      f();
    } catch (std::invalid_argument const& e) {
      throw std::invalid_argument(path_ + ": " + e.what());
    }
  }

  trace_writer& w_;
  std::string const& path_;
};

}  // namespace

void write_trace(std::string const& path, trace_format f, std::string const& comment,
                 std::function<trace(trace_writer&)> const& produce)
{
  if (f == trace_format::pytorch_snapshot) throw std::invalid_argument(path + ": PyTorch snapshots can be read, not written");
  output_file out(path);
  auto const format_writer = make_trace_writer(out.stream(), f, comment);
  file_naming_writer w(*format_writer, path);
  w.finish(produce(w));
  out.commit();
}

void write_trace(std::string const& path, trace const& t, trace_format f, std::string const& comment)
{
  write_trace(path, f, comment, [&](trace_writer& w) {
    for_each_batch(t, [&](std::span<event const> batch) { w.write(batch); });
    return t;
  });
}

}  // namespace fraglab::trace
