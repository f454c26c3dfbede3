// Sharded runs: which cells of a sweep or replay one process makes (--shard I/N, or --shard
// slurm inside a Slurm job array), and the columns by which `fraglab merge` checks that a set
// of parts is one whole run (docs/cluster.md).
#pragma once

#include <fraglab/cli/options.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fraglab::cli {

struct shard {
  std::size_t index = 0;  // 0-based: this process runs the cells index, index + count, ...
  std::size_t count = 1;
  bool given = false;  // --shard was given: the output is a part, labelled for merge

  std::vector<std::size_t> cells(std::size_t total) const;
};

// --shard, with `what` naming the cells ("cells of the grid", "(trace, policy) pairs").
void add_shard_option(po::options_description& desc, char const* what);
// --list-cells: print the run's cells (this shard's, with --shard) instead of running them.
void add_list_cells_option(po::options_description& desc);

// --shard I/N, or --shard slurm: the shard from the array task's place in its job array
// (SLURM_ARRAY_TASK_ID among SLURM_ARRAY_TASK_MIN, _MAX, _STEP, _COUNT). Throws
// std::invalid_argument outside an array job, or for an array whose ids are not evenly spaced.
shard shard_option(po::variables_map const& vm);

// What a sharded run's parts end in: the run's cell count and an id of its definition.
struct part_columns {
  std::string_view cells, id;
};
inline constexpr part_columns sweep_part{"sweep_cells", "sweep_id"};
inline constexpr part_columns replay_part{"replay_cells", "replay_id"};
inline constexpr part_columns part_kinds[] = {sweep_part, replay_part};

// An id of what makes a run's cells: its command, traces (by file name and length, so that the
// same files under other paths on another node still agree), policies, grid, parameters,
// backend and replay options. 64-bit FNV-1a (Fowler, Noll, Vo), written here rather than taken
// from Boost, whose hash may change between versions while the parts of one run come from
// many machines.
std::string run_id(std::string_view command, std::vector<trace::trace> const& traces, std::vector<std::string> const& specs,
                   std::vector<std::pair<std::string, std::vector<std::string>>> const& axes, param_set const& user,
                   backend_choice const& backend, replay_options const& options);

// Writes `rows` (each starting with its cell number under a `cell` column) as a part of a
// sharded run of `total` cells when `s.given`, else as the whole table; a replay's whole table
// has no `cell` column, so that merged parts equal it.
void write_cell_rows(po::variables_map const& vm, shard const& s, part_columns kind, std::size_t total, std::string const& id,
                     std::vector<std::string> columns, std::vector<std::vector<std::string>> rows);

}  // namespace fraglab::cli
