// Command-line pieces the fraglab subcommands share (Boost.Program_options).
#pragma once

#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/table_view.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fraglab::cli {

namespace po = boost::program_options;

// Boost's default style, less its guessing of an abbreviated option: `gen random --max-size
// 20` was read as --max-size-log2 20, a largest block of 1 MiB, not 20 bytes.
inline constexpr int exact_option_names =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

// Adds -h, parses with `positional` (if not empty) taking the bare arguments, and checks
// --format when the command has it, so that a bad format fails before any work. Empty after
// printing the help for -h.
std::optional<po::variables_map> parse_command(std::vector<std::string> const& args, po::options_description& desc,
                                               char const* positional = "", int positional_count = -1);

// TRACE... and -p P[,P...], and reading them: every trace is read and every policy spec split
// before anything runs, so that a typo in the last argument fails fast.
void add_trace_and_policy_options(po::options_description& desc);
// Results name a trace by its file name, so two traces of one name (or one given twice)
// would give rows that no reader could tell apart: throws std::invalid_argument for them.
void check_distinct_names(std::vector<std::string> const& paths);
// With --keep-going, a trace that cannot be read is left out with a warning and the command
// runs on the rest; skipped_traces() counts them, and fraglab then exits 1.
std::vector<trace::trace> read_traces(po::variables_map const& vm);
// --device N and --ignore-releases: which of a file's traces, and whether with their cache
// releases (read_traces applies them; add_trace_and_policy_options adds them).
void add_trace_selection_options(po::options_description& desc);
std::optional<trace::allocator_choice> device_option(po::variables_map const& vm);
void apply_trace_selection(po::variables_map const& vm, trace::trace& t);
std::size_t skipped_traces() noexcept;
std::vector<std::string> policy_specs(po::variables_map const& vm);
// --format, else what -o's extension says (.csv, .json, .md), else the table; a --format
// that contradicts the extension is refused.
output_format chosen_output_format(po::variables_map const& vm);
// --ignore-recorded-settings: whether a snapshot's allocator settings are left out of the
// cells that would apply them (cell_parameters).
void add_recorded_settings_option(po::options_description& desc);
bool recorded_settings_applied(po::variables_map const& vm);
// A size with units; throws std::invalid_argument naming the option.
std::size_t size_option(std::string const& name, std::string const& text);

// A whole number in [least, most]; throws std::invalid_argument naming the option. Counts
// are read as text and parsed here because Boost's own parsing of an unsigned option
// (lexical_cast) reads "-1" as 4294967295: `--repeat -1` started four billion timed runs.
std::uint64_t count_option(std::string const& name, std::string const& text, std::uint64_t least = 0,
                           std::uint64_t most = std::numeric_limits<std::uint64_t>::max());

// A positive number of seconds; throws std::invalid_argument naming the option.
double seconds_option(std::string const& name, std::string const& text);

// --offline and --offline-time-limit S: the gap of every cell to the offline planner's best
// placement of its trace (experiments/runtime/plan/offline_gap.hpp); nothing unless --offline.
void add_offline_options(po::options_description& desc);
std::optional<double> offline_option(po::variables_map const& vm);

// -j/--jobs N, at least 1; `help` says what runs in parallel.
void add_jobs_option(po::options_description& desc, char const* help);
unsigned jobs_option(po::variables_map const& vm);

// The options that say which allocator runs: --set, --capacity, --backend.
void add_allocator_options(po::options_description& desc);
// Those of a command that looks at one trace under its policies (dump, export, view): the
// allocator's, --device, --ignore-releases and --ignore-recorded-settings.
void add_one_trace_options(po::options_description& desc);

allocator_options read_allocator_options(po::variables_map const& vm);

// --repeat N and --warm: how the timed runs of each cell are made (replay_options).
// `repeats` is the default of --repeat: replay times one run, a sweep none (its cells are a
// fragmentation study, and run side by side with --jobs).
void add_timing_options(po::options_description& desc, char const* repeats = "1");
void read_timing_options(po::variables_map const& vm, replay_options& o);

// The files the options `names` (those given) will write, checked before any work: each
// could be written (check_output_file), and no two are the same file. Throws
// std::invalid_argument naming the option.
void check_output_options(po::variables_map const& vm, std::initializer_list<char const*> names);

// Where write_rows and write_all_columns put the table, on this thread, instead of writing
// it (the Python module's fraglab.run); null, as it starts: they write.
rows_table*& table_sink() noexcept;

// --format, --output/-o: write `rows` under `columns` to the file (atomically) or stdout.
void add_output_options(po::options_description& desc);
void write_rows(po::variables_map const& vm, std::vector<std::string> const& columns,
                std::vector<std::vector<std::string>> const& rows);
// The same with every column as it is, whatever the format (no reader's view of a results
// table): info's rows, a run's list of cells.
void write_all_columns(po::variables_map const& vm, std::vector<std::string> const& columns,
                       std::vector<std::vector<std::string>> const& rows);

}  // namespace fraglab::cli
