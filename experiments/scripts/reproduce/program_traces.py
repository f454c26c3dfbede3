"""Traces of real programs, captured at run time by `fraglab trace` from programs installed
from Debian (by .ci/install-deps, which runs here when one is missing): the inputs of
the program tables.

Each program runs a fixed workload (experiments/scripts/workloads/); the trace kept is that of the
process doing the work (cc1plus for g++, troff for groff). `quick` shrinks every workload
for the tests."""

import glob
import os
import shutil
import subprocess
import sys

from results_io import ROOT, SHARED_TRACES, file_digest, first_line, input_arguments

WORKLOADS = os.path.join(ROOT, "experiments", "scripts", "workloads")


def programs(fraglab, work, quick):
    """(name, command, extra environment, process to keep, version command) per program."""
    source = os.path.join(ROOT, "experiments", "runtime", "gen",
                          "phases_and_random.cpp" if quick else "transformer_training.cpp")
    # The build tree's include/ holds the <fraglab/...> names the source includes.
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(fraglab))), "include")
    document, postscript = os.path.join(work, "document.ms"), os.path.join(work, "document.ps")
    return [
        ("g++", ["g++", "-O2", "-std=c++20", "-I", include, "-c", source, "-o", os.path.join(work, "compiled.o")],
         {}, "cc1plus", ["g++", "--version"]),
        ("python3", ["/usr/bin/python3", os.path.join(WORKLOADS, "wordcount.py"), "20" if quick else "100"],
         {"PYTHONMALLOC": "malloc"}, "python3", ["/usr/bin/python3", "--version"]),
        ("perl", ["perl", os.path.join(WORKLOADS, "wordcount.pl"), "20" if quick else "300"],
         {}, "perl", ["perl", "-e", "print qq(perl $^V)"]),
        ("sqlite3", ["sqlite3", ":memory:", "-cmd", f".parameter set @n {10000 if quick else 100000}",
                     f".read {os.path.join(WORKLOADS, 'queries.sql')}"],
         {}, "sqlite3", ["sqlite3", "--version"]),
        ("groff", ["sh", "-c", f"/usr/bin/python3 {os.path.join(WORKLOADS, 'make_document.py')} "
                               f"{4 if quick else 40} {document} && groff -t -ms -Tps {document} > {postscript}"],
         {}, "troff", ["groff", "--version"]),
        ("ghostscript", ["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=png16m", "-r72",
                         "-o", os.path.join(work, "page-%03d.png"), postscript],
         {}, "gs", ["gs", "--version"]),
    ]


def trace_program(fraglab, out, command, env, work):
    done = subprocess.run([fraglab, "trace", "-o", out, "--"] + command, env={**os.environ, **env}, cwd=work,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"`fraglab trace -- {' '.join(command)}` exited {done.returncode}:\n{done.stderr}")


def capture(fraglab, work, quick=False, only=None):
    """{program: trace path} and {program: version}; traces already captured are reused."""
    os.makedirs(work, exist_ok=True)
    traces, versions = {}, {}
    for name, command, env, keep, version in programs(fraglab, work, quick):
        if only and name not in only:
            continue
        if shutil.which(command[0]) is None:  # installed from Debian during the experiment
            print(f"{command[0]} is missing: running .ci/install-deps", file=sys.stderr)
            subprocess.run(["bash", os.path.join(ROOT, ".ci", "install-deps")], check=False)
            if shutil.which(command[0]) is None:
                sys.exit(f"{command[0]} is not installed and .ci/install-deps could not install it")
        versions[name] = first_line(version)
        kept = os.path.join(work, f"{name}.fbin")
        if not os.path.exists(kept):
            out = os.path.join(work, f"{name}.traces")
            shutil.rmtree(out, ignore_errors=True)
            trace_program(fraglab, out, command, env, work)
            candidates = [f for f in glob.glob(os.path.join(out, "*.fbin")) if os.path.basename(f).startswith(keep)]
            if not candidates:
                sys.exit(f"tracing {name} left no {keep}.*.fbin in {out}")
            # The process that did the work is the one with the most events: the largest file.
            os.replace(max(candidates, key=os.path.getsize), kept)
            shutil.rmtree(out, ignore_errors=True)
        traces[name] = kept
    return traces, versions


def host_traces(quick):
    """The host traces of ../shared/traces/host when present (not in quick runs):
    {name: path} and {file: checksum}."""
    host = os.path.join(SHARED_TRACES, "host")
    traces, versions = {}, {}
    if os.path.isdir(host) and not quick:
        for f in sorted(os.listdir(host)):
            if f.endswith(".csv"):
                traces[f[: -len(".csv")]] = os.path.join(host, f)
                versions[f] = f"sha256 {file_digest(os.path.join(host, f))}"
    return traces, versions



def main(argv):
    args = input_arguments("trace the programs the program tables read", argv)
    traces, versions = capture(args.fraglab, args.work_dir, args.quick)
    for name, path in traces.items():
        print(f"{name}: {path} ({versions[name]})")


if __name__ == "__main__":
    main(sys.argv[1:])
