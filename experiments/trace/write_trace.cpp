#include "experiments/trace/write_trace.hpp"

#include "experiments/output/output_file.hpp"
#include "experiments/trace/native_binary.hpp"
#include "experiments/trace/native_text.hpp"
#include "experiments/trace/rmm_csv.hpp"

#include <stdexcept>

namespace fraglab::trace {
namespace {

bool ends_with(std::string const& s, std::string_view suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

trace_format output_trace_format(std::string const& path, std::string_view requested)
{
  if (requested == "text") return trace_format::native_text;
  if (requested == "binary") return trace_format::native_binary;
  if (requested == "rmm-csv") return trace_format::rmm_csv;
  if (!requested.empty())
    throw std::invalid_argument("--to: expected text, binary or rmm-csv, got '" + std::string(requested) + "'");
  if (ends_with(path, ".fbin")) return trace_format::native_binary;
  if (ends_with(path, ".csv")) return trace_format::rmm_csv;
  return trace_format::native_text;
}

void write_trace(std::string const& path, trace const& t, trace_format f, std::string const& comment)
{
  output_file out(path);
  switch (f) {
    case trace_format::native_text: write_native_text(out.stream(), t, comment); break;
    case trace_format::native_binary: write_native_binary(out.stream(), t); break;
    case trace_format::rmm_csv:
      try {
        write_rmm_csv(out.stream(), t);
      } catch (std::invalid_argument const& e) {
        throw std::invalid_argument(path + ": " + e.what());
      }
      break;
    case trace_format::pytorch_snapshot: throw std::invalid_argument(path + ": PyTorch snapshots can be read, not written");
  }
  out.commit();
}

}  // namespace fraglab::trace
