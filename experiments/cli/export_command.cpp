// fraglab export: a policy's replay of a trace as a PyTorch memory snapshot, for PyTorch's
// viewers (experiments/runtime/inspect/export_snapshot.hpp).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/runtime/inspect/export_snapshot.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <iostream>
#include <stdexcept>

namespace fraglab::cli {

int export_trace(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab export TRACE -p POLICY --to pytorch-snapshot -o OUT.pickle [options]\n\n"
      "  fraglab export run.trace -p tf_bfc --to pytorch-snapshot -o tf_bfc.pickle   then drop it on pytorch.org/memory_viz\n"
      "  fraglab export snap.pickle -p pytorch_caching --to pytorch-snapshot -o again.pickle   (fraglab verify again.pickle: every address)\n\n"
      "The snapshot holds the policy's decisions as PyTorch records its own (alloc, free_requested, free_completed,\n"
      "segment_alloc, segment_free, segment_map, segment_unmap, oom) and its segments at the end; stack frames are empty.\n\n"
      "Options");
  desc.add_options()                                                                            //
      ("trace", po::value<std::string>(), "trace file")                                         //
      ("policy,p", po::value<std::string>(), "one policy name or compose: spec")                //
      ("to", po::value<std::string>(), "pytorch-snapshot (the only format so far)")            //
      ("output,o", po::value<std::string>(), "OUT.pickle: written only when the export succeeds");
  add_one_trace_options(desc);
  auto const parsed = parse_command(args, desc, "trace", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("trace")) throw std::invalid_argument("no trace given");
  if (!vm.count("policy")) throw std::invalid_argument("no policy given (-p NAME)");
  if (!vm.count("to") || vm["to"].as<std::string>() != "pytorch-snapshot")
    throw std::invalid_argument("--to: expected pytorch-snapshot" +
                                (vm.count("to") ? ", got '" + vm["to"].as<std::string>() + "'" : std::string(" (none given)")));
  if (!vm.count("output") || vm["output"].as<std::string>() == "-")
    throw std::invalid_argument("-o OUT.pickle: a snapshot is binary; give the file to write");
  check_output_options(vm, {"output"});
  check_output_file(vm["output"].as<std::string>(), {vm["trace"].as<std::string>()});
  auto const [user, backend] = read_allocator_options(vm);
  std::string const spec = vm["policy"].as<std::string>();
  (void)make_composition(spec, user, backend);  // a bad policy or key fails before the trace is read
  trace::trace t = trace::read_trace(vm["trace"].as<std::string>(), device_option(vm));
  apply_trace_selection(vm, t);
  note_recorded_settings({t}, {spec}, recorded_settings_applied(vm));
  auto const c = make_composition(spec, cell_parameters(spec, user, t, recorded_settings_applied(vm)), backend);
  output_file out(vm["output"].as<std::string>());
  export_pytorch_snapshot(*c, t, parse_policy_spec(spec).base == "pytorch_expandable", out.stream());
  out.commit();
  std::cerr << "wrote " << t.name << " under " << c->name() << " as a PyTorch memory snapshot to " << vm["output"].as<std::string>()
            << '\n';
  return 0;
}

}  // namespace fraglab::cli
