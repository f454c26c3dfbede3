#include <fraglab/cli/shard_option.hpp>

#include <fraglab/runtime/io/input_error.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace fraglab::cli {
namespace {

std::optional<std::size_t> whole_number(std::string_view text)
{
  std::size_t n = 0;
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// The task's place in its array. Slurm numbers an array's tasks by the ids --array gave
// (0-15, 1-31:2, 0-99%10), and tells each task its id and the array's least, greatest, step
// and count; the shard is the id's rank among them. A list of ids that is no progression
// (--array=1,4,5) has no rank a task can compute alone, so it is refused.
shard slurm_array_shard()
{
  char const* const id_text = std::getenv("SLURM_ARRAY_TASK_ID");
  if (id_text == nullptr) {
    char const* const job = std::getenv("SLURM_JOB_ID");
    throw std::invalid_argument(std::string("--shard slurm: SLURM_ARRAY_TASK_ID is not set: ") +
                                (job != nullptr ? "Slurm job " + std::string(job) + " is not an array job"
                                                : std::string("this is not a Slurm job")) +
                                "; submit it with sbatch --array=0-N (experiments/scripts/cluster/submit.sh does), or give --shard I/N");
  }
  auto const read = [](char const* name, bool required) -> std::optional<std::size_t> {
    char const* const text = std::getenv(name);
    if (text == nullptr) {
      if (required) throw std::invalid_argument(std::string("--shard slurm: ") + name + " is not set, though SLURM_ARRAY_TASK_ID is");
      return std::nullopt;
    }
    auto const n = whole_number(text);
    if (!n) throw std::invalid_argument(std::string("--shard slurm: expected a whole number in ") + name + ", got " + fraglab::quoted(text));
    return n;
  };
  std::size_t const id = *read("SLURM_ARRAY_TASK_ID", true);
  std::size_t const least = *read("SLURM_ARRAY_TASK_MIN", true);
  std::size_t const most = *read("SLURM_ARRAY_TASK_MAX", true);
  std::size_t const count = *read("SLURM_ARRAY_TASK_COUNT", true);
  std::optional<std::size_t> step = read("SLURM_ARRAY_TASK_STEP", false);
  if (!step && count > 1 && most >= least) step = (most - least) / (count - 1);
  bool const progression = count >= 1 && most >= least && step.value_or(1) >= 1 &&
                           (most - least) == (count - 1) * step.value_or(1) && id >= least && id <= most &&
                           (id - least) % step.value_or(1) == 0;
  if (!progression)
    throw std::invalid_argument("--shard slurm: task " + std::to_string(id) + " of an array of " + std::to_string(count) +
                                " tasks from " + std::to_string(least) + " to " + std::to_string(most) +
                                (step ? " in steps of " + std::to_string(*step) : std::string()) +
                                ": its ids are not evenly spaced, so no task can tell its shard; give --shard I/N in each task");
  return {(id - least) / step.value_or(1), count, true};
}

}  // namespace

std::vector<std::size_t> shard::cells(std::size_t total) const
{
  std::vector<std::size_t> mine;
  for (std::size_t c = index; c < total; c += count) mine.push_back(c);
  return mine;
}

void add_shard_option(po::options_description& desc, char const* what)
{
  std::string const help = std::string("I/N: run every N-th of the ") + what +
                           " starting at the I-th (1-based), or `slurm`: the shard of this task of a Slurm job array; "
                           "`fraglab merge` joins the parts";
  desc.add_options()("shard", po::value<std::string>(), help.c_str());
}

void add_list_cells_option(po::options_description& desc)
{
  desc.add_options()("list-cells", "print the cells this run would make (this shard's, with --shard), each with its trace's events, "
                                   "and run none: to size a cluster job");
}

shard shard_option(po::variables_map const& vm)
{
  if (!vm.count("shard")) return {};
  std::string const text = vm["shard"].as<std::string>();
  if (text == "slurm") return slurm_array_shard();
  std::size_t const slash = text.find('/');
  std::optional<std::size_t> i, n;
  if (slash != std::string::npos) {
    i = whole_number(std::string_view(text).substr(0, slash));
    n = whole_number(std::string_view(text).substr(slash + 1));
  }
  if (!i || !n || *i < 1 || *i > *n) throw std::invalid_argument("--shard: expected I/N with 1 <= I <= N, or slurm, got " + fraglab::quoted(text));
  return {*i - 1, *n, true};
}

std::string run_id(std::string_view command, std::vector<trace::trace> const& traces, std::vector<std::string> const& specs,
                   std::vector<std::pair<std::string, std::vector<std::string>>> const& axes, param_set const& user,
                   backend_choice const& backend, replay_options const& options)
{
  std::string text;
  // Each item prefixed by its length, so that no two descriptions run together alike.
  auto add = [&](std::string_view item) {
    text += std::to_string(item.size());
    text += ':';
    text += item;
  };
  add(command);
  for (auto const& t : traces) {
    add(t.name);
    add(std::to_string(t.event_count()));
  }
  add("policies");
  for (auto const& s : specs) add(s);
  for (auto const& [key, values] : axes) {
    add("vary " + key);
    for (auto const& v : values) add(v);
  }
  for (auto const& [key, value] : user.values()) add("set " + key + "=" + value);
  add("backend " + backend.kind + " " + std::to_string(backend.capacity));
  add("repeat " + std::to_string(options.repeats) + (options.warm ? " warm" : "") +
      (options.frees == free_by::address ? " by address" : "") + (options.strict ? " strict" : "") +
      (options.stop_on_failure ? " stop on failure" : ""));
  std::uint64_t h = 0xcbf29ce484222325;
  for (unsigned char const c : text) {
    h ^= c;
    h *= 0x100000001b3;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

void write_cell_rows(po::variables_map const& vm, shard const& s, part_columns kind, std::size_t total, std::string const& id,
                     std::vector<std::string> columns, std::vector<std::vector<std::string>> rows)
{
  if (s.given) {
    columns.emplace_back(kind.cells);
    columns.emplace_back(kind.id);
    for (auto& row : rows) {
      row.push_back(std::to_string(total));
      row.push_back(id);
    }
  } else if (kind.id == replay_part.id) {
    columns.erase(columns.begin());
    for (auto& row : rows) row.erase(row.begin());
  }
  write_rows(vm, columns, rows);
}

}  // namespace fraglab::cli
