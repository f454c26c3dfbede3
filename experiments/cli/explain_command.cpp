// fraglab explain: why a recorded PyTorch program ran out of memory (experiments/runtime/run/explain.hpp).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/provenance.hpp>
#include <fraglab/cli/view_page.hpp>
#include <fraglab/runtime/inspect/view_data.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/svg_chart.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/run/explain.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <algorithm>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>
#include <sstream>

namespace fraglab::cli {
namespace {

using svg::escaped;

// The view of the recording under its recorded preset (`fraglab view`'s page), its slider able
// to reach the moment explained, with the explanation and every row of its tables above it.
std::string html_page(trace::trace const& t, explanation const& e, std::string const& made_by)
{
  auto const recorded = make_composition(e.preset, cell_parameters(e.preset, {}, t, true),
                                         backend_choice{"simulated", std::numeric_limits<std::size_t>::max()});
  view_options options;
  options.at.push_back(e.events);
  fit_page(options, 1);
  std::string const preface = "<h2 id=\"explain\" data-event=\"" + std::to_string(e.events) + "\">" + escaped(e.out_of_memory ? "Why it ran out of memory" : "What its peak was made of") +
                              " (after event " + std::to_string(e.events) + ", where the slider opens)</h2>\n<pre class=\"state\">" + escaped(e.text) +
                              "</pre>\n<h2>Free blocks stranded beside live blocks</h2>\n" + html_table(e.stranded.columns, e.stranded.rows) +
                              "<details><summary>What if: the recorded settings, then the " + std::to_string(e.what_if.rows.size() - 1) +
                              " tried, replayed</summary>\n" + html_table(e.what_if.columns, e.what_if.rows) + "</details>\n";
  return view_page(view_data_json(t, {recorded.get()}, options), made_by, preface);
}

// The first `n` rows, and a line saying how many more there are.
std::string first_rows(results_table const& t, std::size_t n)
{
  results_table shown{t.columns, {t.rows.begin(), t.rows.begin() + static_cast<std::ptrdiff_t>(std::min(n, t.rows.size()))}};
  std::string out = format_rows(shown.columns, shown.rows, output_format::table);
  if (t.rows.size() > n) out += "  ... and " + std::to_string(t.rows.size() - n) + " more rows (-o FILE.html or --format csv: all)\n";
  return out;
}

}  // namespace

int explain(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab explain SNAPSHOT [--device N] [--oom K] [-o FILE.html] [options]\n\n"
      "  fraglab explain oom.pickle                 why its first out-of-memory error happened, and what would have served it\n"
      "  fraglab explain oom.pickle -o why.html     the same as a page, every row of its tables\n"
      "  fraglab explain run.pickle                 without an OOM: what the first peak of reserved memory was made of\n\n"
      "Replays the recording under the preset that reproduces it (its recorded settings, as verify does) up to the\n"
      "failed request and reads the allocator's state there: the memory there was (reserved plus the device's free\n"
      "bytes, as the oom entry records them), the live blocks, and the free blocks stranded in segments that live\n"
      "blocks hold. The verdict: real demand (the live blocks and the request exceed that memory), fragmentation (they\n"
      "fit, but no free block of the request's pool held it), or not the allocator (the replay serves it within that memory).\n"
      "Then each setting `fraglab tune` tries is replayed up to the request, and the request, within that memory.\n\n"
      "Options");
  desc.add_options()                                                                      //
      ("snapshot", po::value<std::string>(), "a PyTorch memory snapshot")                //
      ("device", po::value<std::string>(), "N: the allocator of device cuda:N (needed when several recorded)")  //
      ("oom", po::value<std::string>(), "K: the K-th out-of-memory error recorded (default 1)")  //
      ("jobs,j", po::value<std::string>(), "settings replayed in parallel (default: every core)")  //
      ("format", po::value<std::string>(), "csv, json or md: the what-if table alone, in that format")  //
      ("output,o", po::value<std::string>(), "FILE.html: a page of the explanation and every row of its tables; "
                                             "another name: the text; written only when the run succeeds");
  auto const parsed = parse_command(args, desc, "snapshot", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("snapshot")) throw std::invalid_argument("no snapshot given");
  check_output_options(vm, {"output"});
  if (vm.count("output")) check_output_file(vm["output"].as<std::string>(), {vm["snapshot"].as<std::string>()});
  explain_options o;
  if (vm.count("oom")) o.failure = count_option("oom", vm["oom"].as<std::string>(), 1, std::size_t{1} << 32) - 1;
  o.jobs = vm.count("jobs") ? static_cast<unsigned>(count_option("jobs", vm["jobs"].as<std::string>(), 1, 1u << 16))
                            : std::max(1u, std::thread::hardware_concurrency());
  std::optional<output_format> format;
  if (vm.count("format")) format = parse_output_format(vm["format"].as<std::string>());
  trace::trace const t = trace::read_trace(vm["snapshot"].as<std::string>(), device_option(vm));
  explanation const e = fraglab::explain(t, o);

  std::string out;
  if (format && *format != output_format::table) {
    out = format_rows(e.what_if.columns, e.what_if.rows, *format);
  } else if (vm.count("output") && vm["output"].as<std::string>().ends_with(".html")) {
    out = html_page(t, e, made_by("explain", args));
  } else {
    out = e.text + "\nfree blocks stranded beside live blocks (the request's pool first):\n" +
          (e.stranded.rows.empty() ? std::string("  none\n") : first_rows(e.stranded, 10)) + "\nwhat if:\n" + first_rows(e.what_if, 13);
  }
  if (vm.count("output")) {
    write_output_file(vm["output"].as<std::string>(), out);
    std::cout << e.text;
  } else {
    std::cout << out;
  }
  return 0;
}

}  // namespace fraglab::cli
