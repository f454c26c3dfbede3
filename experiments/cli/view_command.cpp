// fraglab view: an interactive memory map of a trace under one or more policies, as one HTML
// file (experiments/runtime/inspect/view_data.hpp, experiments/cli/view_page.hpp).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/provenance.hpp>
#include <fraglab/cli/view_page.hpp>
#include <fraglab/runtime/inspect/view_data.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <iostream>
#include <stdexcept>

namespace fraglab::cli {

int view(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab view TRACE -p P[,Q...] -o VIEW.html [options]\n\n"
      "  fraglab view run.trace -p best_fit,tlsf,tf_bfc --backend simulated -o view.html\n"
      "  fraglab view snap.pickle --device 0 -p pytorch_caching,pytorch_expandable -o view.html\n\n"
      "One HTML file that works offline: for each policy, side by side on one time axis, its live, allocated and\n"
      "reserved bytes over time, its address space over time (chunks in use and free), its state at the event the\n"
      "slider points at (as `fraglab dump --at N`: chunks, the largest free chunk, free bytes per region), and at its\n"
      "peak the largest free chunks with the blocks that hold them in place.\n\n"
      "Options");
  desc.add_options()                                                                                   //
      ("trace", po::value<std::string>(), "trace file")                                                //
      ("policy,p", po::value<std::vector<std::string>>()->multitoken(), "policy names or compose: specs")  //
      ("states", po::value<std::string>()->default_value("60"), "N: events the state is kept at, spread evenly (and each peak); a page holds 30,000 states in all, "
                                                                "and draws fewer chunks a state (buckets) the more it holds")  //
      ("at", po::value<std::string>(), "N[,M...]: events the state is kept at besides those, for the slider to reach exactly")  //
      ("output,o", po::value<std::string>(), "VIEW.html: written only when the view is made");
  add_one_trace_options(desc);
  auto const parsed = parse_command(args, desc, "trace", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("trace")) throw std::invalid_argument("no trace given");
  if (!vm.count("output")) throw std::invalid_argument("no -o VIEW.html given");
  std::string const out = vm["output"].as<std::string>();
  if (!out.ends_with(".html") && !out.ends_with(".htm")) throw std::invalid_argument("-o: expected a file name ending .html, got '" + out + "'");
  check_output_options(vm, {"output"});
  check_output_file(out, {vm["trace"].as<std::string>()});
  view_options options;
  options.states = static_cast<std::size_t>(count_option("states", vm["states"].as<std::string>(), 1, 100000));
  if (vm.count("at"))
    for (std::string_view const n : list_items(vm["at"].as<std::string>()))
      options.at.push_back(count_option("at", std::string(n), 1));
  allocator_options const chosen = read_allocator_options(vm);
  std::vector<std::string> const specs = policy_specs(vm);
  (void)make_compositions(specs, chosen);
  fit_page(options, specs.size());
  trace::trace t = trace::read_trace(vm["trace"].as<std::string>(), device_option(vm));
  apply_trace_selection(vm, t);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings({t}, specs, recorded);
  std::vector<std::unique_ptr<composition>> made;
  std::vector<composition const*> policies;
  for (auto const& spec : specs) {
    made.push_back(make_composition(spec, cell_parameters(spec, chosen.user, t, recorded), chosen.backend));
    policies.push_back(made.back().get());
  }
  write_output_file(out, view_page(view_data_json(t, policies, options), made_by("view", args)));
  std::cerr << "wrote " << out << '\n';
  return 0;
}

}  // namespace fraglab::cli
