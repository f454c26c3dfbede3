// fraglab report: the comparison a paper's section needs, in one command: what the traces
// hold, the readable table with its legend, and per trace the footprint over time, frag4 and
// the least capacity of every policy, with the command, commit, machine and date that made it.
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/provenance.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/svg_chart.hpp>
#include <fraglab/runtime/output/table_view.hpp>
#include <fraglab/runtime/run/min_capacity.hpp>
#include <fraglab/runtime/run/replay_cells.hpp>
#include <fraglab/runtime/run/trace_statistics.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>

namespace fraglab::cli {
namespace {

// The first line of every figure `report -o R.md` writes beside R.md: what a later report may
// replace. A file of that name without it is someone else's, and is never written over.
constexpr std::string_view figure_mark = "<!-- a figure of fraglab report -->\n";

void check_figure_is_ours(std::string const& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // not there: the run makes it
  std::string head(figure_mark.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (static_cast<std::size_t>(in.gcount()) != head.size() || head != figure_mark)
    throw std::invalid_argument(path + ": exists and is not a figure an earlier report wrote; the report writes its figures "
                                "beside it under that name: move it, or write the report elsewhere");
}

struct figure {
  std::string caption;  // what it shows, with the metrics' definitions
  std::string svg;
};

struct trace_section {
  std::string trace;
  std::vector<figure> figures;
};

std::size_t column_of(std::vector<std::string> const& columns, std::string const& name)
{
  return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
}

}  // namespace

int report(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab report TRACE... -p P[,P...] -o REPORT.html|REPORT.md [options]\n\n"
      "  fraglab report run.trace -p best_fit,tlsf,tf_bfc --backend simulated -o report.html\n"
      "  fraglab report *.pickle -p pytorch_caching,tf_bfc -o report.md       (the figures as REPORT-N.svg beside it)\n\n"
      "What the traces hold, the table `fraglab replay` shows with what each column measures, and per trace the\n"
      "reserved bytes over time (live bytes once: every policy has the same), frag4 and the least capacity of each\n"
      "policy; the command, commit, machine and date that made it. HTML is one file, its figures inline.\n\n"
      "Options");
  add_trace_and_policy_options(desc);
  add_jobs_option(desc, "cells run in parallel");
  add_allocator_options(desc);
  desc.add_options()("output,o", po::value<std::string>(), "REPORT.html or REPORT.md: written only when the report is made");
  auto const parsed = parse_command(args, desc, "trace");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("output")) throw std::invalid_argument("no -o REPORT.html or REPORT.md given");
  std::string const out = vm["output"].as<std::string>();
  bool const html = out.ends_with(".html") || out.ends_with(".htm");
  if (!html && !out.ends_with(".md")) throw std::invalid_argument("-o: expected a file name ending .html or .md, got '" + out + "'");
  check_output_options(vm, {"output"});
  unsigned const jobs = jobs_option(vm);
  allocator_options const chosen = read_allocator_options(vm);
  std::vector<std::string> const specs = policy_specs(vm);
  (void)make_compositions(specs, chosen);
  std::vector<trace::trace> const traces = read_traces(vm);
  auto const& paths = vm["trace"].as<std::vector<std::string>>();
  check_output_file(out, paths);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);
  run_inputs const in{addresses_of(traces), specs, chosen, recorded, jobs, std::nullopt};

  replay_options options;
  options.repeats = 0;
  options.timeseries = true;
  replay_run run = run_replay(in, options, every_cell(replay_cell_count(in)));
  run.table.columns.erase(run.table.columns.begin());  // the cell numbers, which only a shard needs
  for (auto& row : run.table.rows) row.erase(row.begin());
  std::optional<results_table> capacities;
  if (chosen.backend.capacity == std::numeric_limits<std::size_t>::max()) capacities = min_capacities(in);

  // What the traces hold.
  rows_table inputs;
  for (trace::trace const* t : in.traces) {
    auto const stats = trace_statistics(*t);
    inputs.columns.clear();
    auto& row = inputs.rows.emplace_back();
    for (auto const& [key, value] : stats)
      if (key == "trace" || key == "format" || key == "events" || key == "allocs" || key == "frees" || key == "releases" ||
          key == "peak_live_bytes") {
        inputs.columns.push_back(key);
        row.push_back(key.ends_with("_bytes") ? human_size(std::stoull(value)) : value);
      }
  }
  rows_table const shown = viewed({run.table.columns, run.table.rows}, view_choice{}, true);
  std::vector<std::string> const shown_names = default_columns({run.table.columns, run.table.rows});

  // Per trace: reserved bytes over time, frag4, the least capacity.
  std::vector<trace_section> sections;
  std::size_t const policies = specs.size();
  std::size_t const frag4 = column_of(run.table.columns, "frag4");
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    trace_section s{traces[ti].name, {}};
    std::vector<svg::series> lines;
    std::vector<svg::bar> frag_bars, capacity_bars;
    for (std::size_t pi = 0; pi < policies; ++pi) {
      replay_result const& r = run.results[ti * policies + pi];
      svg::series line{r.policy, {}, {}, false, std::nullopt};
      for (timeseries_sample const& x : r.timeseries) {
        line.x.push_back(static_cast<double>(x.event));
        line.y.push_back(static_cast<double>(x.max_reserved_bytes));
      }
      lines.push_back(std::move(line));
      frag_bars.push_back({r.policy, std::stod(run.table.rows[ti * policies + pi][frag4])});
      if (capacities)
        capacity_bars.push_back({r.policy, std::stod(capacities->rows[ti * policies + pi][column_of(capacities->columns, "min_capacity_bytes")])});
    }
    if (!run.results.empty()) {  // live bytes are the trace's: the same under every policy
      svg::series live{"live (every policy)", {}, {}, true, std::string("#000000")};
      for (timeseries_sample const& x : run.results[ti * policies].timeseries) {
        live.x.push_back(static_cast<double>(x.event));
        live.y.push_back(static_cast<double>(x.max_live_bytes));
      }
      lines.push_back(std::move(live));
    }
    std::string const backend = run.results.empty() ? "" : run.results[ti * policies].backend;
    s.figures.push_back({"Reserved bytes over events (the highest between samples), each policy, on the " + backend +
                             " backend; the dashed line is live bytes. reserved: " + meaning_of("peak_reserved_bytes"),
                         svg::line_chart(traces[ti].name + ": reserved bytes over time", {"events", false},
                                         {"reserved bytes", true}, lines)});
    s.figures.push_back({"frag4 of each policy on the " + backend + " backend: " + meaning_of("frag4"),
                         svg::bar_chart(traces[ti].name + ": frag4", {"frag4", false}, frag_bars, true)});
    if (capacities)
      s.figures.push_back({"The least capacity each policy serves the trace in, on the " + backend + " backend: " +
                               meaning_of("min_capacity_bytes") + " (fraglab capacity)",
                           svg::bar_chart(traces[ti].name + ": least capacity", {"least capacity", true}, capacity_bars)});
    sections.push_back(std::move(s));
  }

  std::string const made = made_by("report", args);
  std::vector<std::pair<std::string, std::string>> files;  // path, content: the figures first, then the report
  std::string doc;
  if (html) {
    doc = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fraglab report</title>\n<style>"
          "body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
          "th{background:#f3f3f3}td:first-child,td:nth-child(2){text-align:left}figure{margin:1.5em 0}"
          "figcaption{font-size:12px;color:#555;max-width:760px}code{background:#f3f3f3}</style></head><body>\n"
          "<h1>fraglab report</h1>\n<p>Made by " + svg::escaped(made) + ".</p>\n<h2>Inputs</h2>\n" + html_table(inputs.columns, inputs.rows) +
          "<h2>Results</h2>\n" + html_table(shown.columns, shown.rows) + "<dl>\n";
    for (auto const& c : shown_names) doc += "<dt>" + svg::escaped(c) + "</dt><dd>" + svg::escaped(meaning_of(c)) + "</dd>\n";
    doc += "</dl>\n";
    for (auto const& s : sections) {
      doc += "<h2>" + svg::escaped(s.trace) + "</h2>\n";
      for (auto const& f : s.figures) doc += "<figure>" + f.svg + "<figcaption>" + svg::escaped(f.caption) + "</figcaption></figure>\n";
    }
    doc += "</body></html>\n";
  } else {
    std::string const stem = out.substr(0, out.size() - 3);
    doc = "# fraglab report\n\nMade by " + markdown_text(made) + ".\n\n## Inputs\n\n" +
          format_rows(inputs.columns, inputs.rows, output_format::md) + "\n## Results\n\n" +
          format_rows(shown.columns, shown.rows, output_format::md) + "\n";
    for (auto const& c : shown_names) doc += "- `" + c + "`: " + meaning_of(c) + "\n";
    int n = 0;
    for (auto const& s : sections) {
      doc += "\n## " + markdown_text(s.trace) + "\n";
      for (auto const& f : s.figures) {
        std::string const path = stem + "-" + std::to_string(++n) + ".svg";
        check_output_file(path, paths);
        check_figure_is_ours(path);
        files.emplace_back(path, std::string(figure_mark) + f.svg);
        doc += "\n![" + markdown_text(f.caption) + "](" + trace::file_base_name(path) + ")\n\n" + markdown_text(f.caption) + "\n";
      }
    }
  }
  files.emplace_back(out, doc);
  for (auto const& [path, content] : files) write_output_file(path, content);
  std::cerr << "wrote " << out << (files.size() > 1 ? " and " + std::to_string(files.size() - 1) + " figures beside it" : "") << '\n';
  return 0;
}

}  // namespace fraglab::cli
