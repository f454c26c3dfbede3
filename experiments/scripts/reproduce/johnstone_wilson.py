#!/usr/bin/python3
"""Table 1: fragmentation of the classic policies, dlmalloc, TLSF and TF's BFC on real
programs, in the shape of Johnstone & Wilson (1998), "The Memory Fragmentation Problem:
Solved?", ISMM '98.

    experiments/scripts/reproduce/johnstone_wilson.py [--fraglab PATH] [--out-dir results] [--work-dir DIR]
                                    [--quick] [--recapture]

Inputs: traces captured at run time by `fraglab trace` from g++ (cc1plus compiling a
fraglab source), CPython (PYTHONMALLOC=malloc), Perl, SQLite, groff (troff) and Ghostscript
(experiments/scripts/reproduce/program_traces.py), plus the host traces in ../shared/traces/host when present.

Each composition is replayed twice, as J&W did:
  policy only             no headers, no alignment (quantum 1, minimum 1 byte): what the
                          placement policy itself wastes
  headers and alignment   8-byte header, 16-byte alignment, 32-byte minimum chunk (a 64-bit
                          boundary-tag malloc such as glibc's)
dlmalloc and tf_bfc are presets with their own header and rounding rules; they appear in
the second table only. The measures are J&W's: frag3 = reserved/live - 1 at the moment of
peak reserved, frag4 = peak reserved / peak live - 1 (docs/metrics.md).

Writes OUT/johnstone_wilson.csv (every row), .md (the tables, the ranking against J&W's) and
.svg (frag4 with headers and alignment, per program).
"""

import argparse
import os
import statistics
import sys

import program_traces
from results_io import common_arguments, figures, fraglab_rows, markdown_table, percent, provenance, write_csv, write_markdown

# (label as J&W name it, fraglab policy, J&W's verdict group: 0 best, 1 middle, 2 worst, None not in J&W)
POLICIES = [
    ("first fit, address-ordered", "first_fit", 0),
    ("first fit, LIFO", "first_fit_lifo", 1),
    ("first fit, FIFO", "first_fit_fifo", 1),
    ("next fit, address-ordered", "next_fit", 1),
    ("next fit, LIFO", "list_lifo_next", 1),
    ("next fit, FIFO", "compose:index=list_fifo,fit=next", 1),
    ("best fit, address-ordered", "best_fit", 0),
    ("best fit, LIFO", "compose:index=list_lifo,fit=best", 0),
    ("best fit, FIFO", "compose:index=list_fifo,fit=best", 0),
    ("worst fit", "worst_fit", None),
    ("binary buddy", "buddy", 2),
    ("simple segregated storage 2^N", "segregated_pow2", 2),
    ("TLSF (good fit)", "tlsf", None),
]
PRESETS = [("dlmalloc 2.8.6 (Lea)", "dlmalloc", 0), ("TF BFC", "tf_bfc", None)]
CONFIGS = {
    "policy only": ["--set", "quantum=1", "--set", "min_size=1", "--set", "header=0"],
    "headers and alignment": ["--set", "quantum=16", "--set", "min_size=32", "--set", "header=8"],
}
GROUP_NAMES = {0: "J&W's best (best fit, AO first fit, Lea)", 1: "J&W's middle (LIFO/FIFO first fit, next fit)",
               2: "J&W's worst (buddy, simple segregated)"}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "programs")
    parser.add_argument("--recapture", action="store_true", help="trace the programs again")
    args = parser.parse_args(argv)

    work = args.work_dir + ("-quick" if args.quick else "")
    if args.recapture and os.path.isdir(work):
        for f in os.listdir(work):
            if f.endswith(".fbin"):
                os.remove(os.path.join(work, f))
    traces, versions = program_traces.capture(args.fraglab, work, args.quick,
                                              only={"python3", "sqlite3"} if args.quick else None)
    host, checksums = program_traces.host_traces(args.quick)
    traces |= host
    versions |= checksums
    programs = list(traces)

    rows = []
    for name, path in traces.items():
        for config, settings in CONFIGS.items():
            specs = [p for _, p, _ in POLICIES]
            results = fraglab_rows(args.fraglab, ["replay", path, "-p", ",".join(specs), "--jobs", args.jobs] + settings)
            if config == "headers and alignment":
                # On the heap, as the compositions: TF BFC's own default is the simulated space.
                results += fraglab_rows(args.fraglab, ["replay", path, "-p", ",".join(p for _, p, _ in PRESETS),
                                                       "--backend", "heap"])
            for r in results:
                rows.append([name, r["policy"], config, r["events"], r["peak_live_bytes"], r["peak_reserved_bytes"],
                             r["frag3"], r["frag4"]])
        print(f"{name}: replayed", file=sys.stderr)

    columns = ["program", "policy", "config", "events", "peak_live_bytes", "peak_reserved_bytes", "frag3", "frag4"]
    header = provenance("johnstone_wilson.py", argv, [(f"input {k}", v) for k, v in versions.items()])
    os.makedirs(args.out_dir, exist_ok=True)
    csv_path = os.path.join(args.out_dir, "johnstone_wilson.csv")
    write_csv(csv_path, header, columns, rows)

    value = {(r[0], r[1], r[2]): r for r in rows}
    sections = [[
        "Fragmentation in percent (J&W's measures; lower is better). Rows are policies as J&W name "
        "them; `mean` and `median` are over the programs. dlmalloc and TF BFC keep their own "
        "headers and rounding, so they have no policy-only row. frag3 divides by what is live when "
        "the footprint peaks, so it has no bound when a footprint peaks while little is live (TF "
        "BFC's doubling regions on a small program): the median is the robust summary."]]
    ranking = {}
    for measure in ("frag4", "frag3"):
        for config in CONFIGS:
            table = []
            entries = POLICIES + (PRESETS if config == "headers and alignment" else [])
            for label, spec, _ in entries:
                cells = [float(value[(p, spec, config)][columns.index(measure)]) for p in programs]
                mean = sum(cells) / len(cells)
                table.append([label] + [percent(c) for c in cells] + [percent(mean), percent(statistics.median(cells))])
                if measure == "frag4" and config == "policy only":
                    ranking[spec] = mean
            sections.append([f"## {measure}, {config} (%)", ""] + markdown_table(["policy"] + programs + ["mean", "median"],
                                                                                  table))

    # Where our ranking agrees with J&W's verdicts: the mean rank of each of their groups.
    ordered = sorted(ranking, key=ranking.get)
    lines = ["## Ranking against Johnstone & Wilson's", "",
             "Policies ranked by mean policy-only frag4 (1 = least fragmentation). J&W found best fit "
             "(any free-list order), address-ordered first fit and Lea's allocator best, LIFO and FIFO "
             "first fit and next fit worse, and the buddy and simple segregated storage allocators "
             "worst.", ""]
    label_of = {spec: label for label, spec, _ in POLICIES}
    lines += markdown_table(["rank", "policy", "mean frag4 (%)"],
                            [[i + 1, label_of[s], percent(ranking[s])] for i, s in enumerate(ordered)])
    lines += [""]
    group_rank = {}
    for group, name in GROUP_NAMES.items():
        ranks = [ordered.index(spec) + 1 for _, spec, g in POLICIES if g == group]
        group_rank[group] = sum(ranks) / len(ranks)
        lines.append(f"- {name}: mean rank {group_rank[group]:.1f} of {len(ordered)}")
    agrees = group_rank[0] < group_rank[1] < group_rank[2]
    lines.append(f"- J&W's order of the three groups {'holds' if agrees else 'does not hold'} here.")
    sections.append(lines)
    write_markdown(os.path.join(args.out_dir, "johnstone_wilson.md"),
                   "Fragmentation of real programs, after Johnstone & Wilson (1998)", "johnstone_wilson.py", header,
                   sections + [["![frag4 with headers and alignment](johnstone_wilson.svg)"]])

    # Policies as J&W name them, on a log axis: TF BFC's hundreds of percent would flatten the rest.
    label_of.update({spec: label for label, spec, _ in PRESETS})
    figures(args.out_dir, ["trace", "policy", "backend", "frag4"],
            [[r[0], label_of[r[1]], "heap", r[7]] for r in rows if r[2] == "headers and alignment"],
            [("bars", "johnstone_wilson.svg", ["-y", "frag4", "--log"])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
