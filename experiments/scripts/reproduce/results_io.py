"""What every script in experiments/ that writes to results/ shares: running fraglab,
recording provenance (command, commit, machine, date, input versions), writing a table as
CSV (provenance in leading `#` lines) and Markdown, each atomically, and reading such a CSV
back."""

import argparse
import csv
import fcntl
import glob
import hashlib
import importlib
import io
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# The real traces beside the checkout, where they are; FRAGLAB_SHARED_TRACES (which `meson test`
# sets from its shared_traces option) says where else.
SHARED_TRACES = os.environ.get("FRAGLAB_SHARED_TRACES") or os.path.join(ROOT, "..", "shared", "traces")
DEFAULT_FRAGLAB = os.path.join(ROOT, "build", "experiments", "fraglab")
# The project's virtual environment, where `.ci/install-deps tests` puts what comes from PyPI
# (TensorFlow, JAX), apart from Debian's Python.
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
# Where each kind of script lives under experiments/: those that write results/ (with this
# module), the development tools, and what runs on a GPU machine.
SCRIPT_FOLDERS = ("scripts/reproduce", "scripts/dev", "scripts/device")


def script_path(script):
    """experiments/FOLDER/SCRIPT as the repository names it: what provenance records."""
    for folder in SCRIPT_FOLDERS:
        if os.path.exists(os.path.join(ROOT, "experiments", folder, script)):
            return f"experiments/{folder}/{script}"
    return f"experiments/{script}"


def produced_by(script):
    return f"Produced by `{script_path(script)}`; do not edit by hand."


def written_by(line, script):
    """Whether a report's third line names `script` as its writer: where it lives now, or any
    folder of experiments/ it lived in before (a report keeps the name its first run wrote)."""
    return re.match(r"Produced by `experiments/([\w/]+/)?" + re.escape(script) + r"`; do not edit by hand\.", line) is not None


def run(cmd, **kwargs):
    """stdout of a command that must succeed; its stderr is shown when it does not."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: `{' '.join(cmd)}` exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def _module_beside(fraglab):
    """The Python module the build of `fraglab` made (BUILD/experiments/python), imported, or
    None where there is none (a build without pybind11, numpy or pandas, or under sanitizers)."""
    where = os.path.join(os.path.dirname(os.path.abspath(fraglab)), "python")
    if where not in _modules:
        _modules[where] = None
        if glob.glob(os.path.join(where, "fraglab", "_core*.so")):
            sys.path.insert(0, where)
            try:
                _modules[where] = importlib.import_module("fraglab")
            except ImportError:
                pass
            finally:
                sys.path.remove(where)
    return _modules[where]


_modules = {}


def fraglab_rows(fraglab, args):
    """The table `fraglab ARGS --format csv` writes, as a list of dicts of its cells: run in
    this process through the build's Python module (fraglab.run) where the build made one,
    else by running the command."""
    module = _module_beside(fraglab)
    if module is not None:
        try:
            return module.run(args, text=True)
        except Exception as e:  # the command's own words, as run() reports a command's failure
            sys.exit(f"{os.path.basename(sys.argv[0])}: `fraglab {' '.join(args)}`: {e}")
    return list(csv.DictReader(io.StringIO(run([fraglab] + args + ["--format", "csv"]))))


def first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "not installed"


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def processor():
    """The CPU's model name and the number of cores: what a timing depends on."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def provenance(script, argv, inputs=(), outputs=(), root=ROOT):
    """[(key, value)]: the command, commit, machine, date, then `inputs` (key, value) pairs.

    The commit is marked "(with uncommitted changes)" when a tracked file differs from it,
    except the `outputs` (paths relative to `root`): files the run in progress has already
    written, such as the table an earlier step of the same GPU run left in results/, which
    say nothing about the code that ran."""
    commit = run(["git", "-C", root, "rev-parse", "HEAD"]).strip()
    spared = [f":(exclude){path}" for path in outputs]
    if run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "."] + spared).strip():
        commit += " (with uncommitted changes)"
    return [
        ("command", " ".join([script_path(script)] + argv)),
        ("commit", commit),
        ("machine", f"{platform.node()}: {processor()}, {platform.system()} {platform.release()}"),
        ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
    ] + list(inputs)


class InputError(Exception):
    """A table that is not what its reader expects; the message names FILE:LINE."""


def read_table(path, required):
    """(provenance {key: value}, rows as dicts) of a CSV as write_csv writes it: provenance in
    leading `#` lines, then a header that must have the `required` columns, then rows that must
    have every field. Each row carries its FILE:LINE as row["__where"]."""
    recorded, rows = {}, []
    try:
        with open(path, newline="") as f:
            comments = 0
            line = f.readline()
            while line.startswith("#"):
                key, _, value = line[1:].strip().partition(": ")
                recorded[key] = value
                comments += 1
                line = f.readline()
            f.seek(0)
            for _ in range(comments):
                f.readline()
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(f"{path}:{comments + 1}: expected the column(s) {', '.join(missing)}; "
                                 f"the header has {', '.join(header) or 'nothing'}")
            for row in reader:
                if None in row or any(v is None for v in row.values()):
                    raise InputError(f"{path}:{reader.line_num + comments}: expected {len(header)} fields")
                row["__where"] = f"{path}:{reader.line_num + comments}"
                rows.append(row)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    return recorded, rows


def write_atomically(path, text):
    """Writes `text` (str or bytes) to `path` as the fraglab command writes its outputs
    (experiments/runtime/io/output_file.hpp): a link is followed, the temporary beside the target
    is created exclusively under a unique name and removed if writing fails, the replaced
    file's mode is kept, and a target that is not a regular file is written through."""
    binary = isinstance(text, bytes)
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb" if binary else "w") as f:
            f.write(text)
        return
    mode = os.stat(target).st_mode & 0o7777 if os.path.exists(target) else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target) + ".fraglab-", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_csv(path, header, columns, rows):
    out = io.StringIO()
    for key, value in header:
        out.write(f"# {key}: {value}\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    write_atomically(path, out.getvalue())


def percent(fraction):
    """A fraction as the tables print it: 0.0123 -> '1.23'."""
    return f"{100 * float(fraction):.2f}"


def markdown_table(columns, rows):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def write_markdown(path, title, script, header, sections):
    """sections: list of lists of Markdown lines, separated by blank lines."""
    md = [f"# {title}", "", produced_by(script), ""]
    md += [f"- {key}: `{value}`" for key, value in header]
    for section in sections:
        md += [""] + section
    write_atomically(path, "\n".join(md) + "\n")


def runs_of(path, script):
    """[(run name, its lines)] of a Markdown file write_markdown_run() wrote, in their order;
    [] where `path` does not exist. Raises InputError where it exists but is not such a
    file, so that a run never overwrites a file it did not make."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) < 3 or not lines[0].startswith("# ") or not written_by(lines[2], script):
        raise InputError(f"{path}:1: expected a file of runs written by {script_path(script)}")
    runs = []
    for number, line in enumerate(lines[3:], start=4):
        if line.startswith("## "):
            runs.append((line[3:], []))
        elif runs:
            runs[-1][1].append(line)
        elif line.startswith("- command: "):
            raise InputError(f"{path}:{number}: expected '## RUN' before a run's provenance (this is a file of one run)")
    return runs


def write_markdown_run(path, title, script, about, run, header, sections, replace_all=False):
    """Writes one run of an experiment measured on several machines into the Markdown file
    that holds them all: the section `## RUN` (its provenance, then `sections`) is replaced,
    or added after the others; the other runs are kept as they are. A file lock on the
    file's directory keeps two runs finishing at once (cluster jobs) from losing either.
    With replace_all, the file's content is not read: the run is all it will hold."""
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        runs = {} if replace_all else dict(runs_of(path, script))
        body = [f"- {key}: `{value}`" for key, value in header]
        for section in sections:
            body += ([""] if body else []) + section
        runs[run] = [""] + body
        md = [f"# {title}", "", f"{produced_by(script)} {about}"]
        for name, lines in runs.items():
            while lines and lines[-1] == "":
                lines.pop()
            md += ["", f"## {name}"] + lines
        write_atomically(path, "\n".join(md) + "\n")
    finally:
        os.close(fd)


def output_file(path):
    """argparse type of a file a script writes when it is done: checked when the command is
    read, so that a run of minutes does not end in a traceback over its output's path."""
    if not path:
        raise argparse.ArgumentTypeError("the file name is empty")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is a directory; expected a file name")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"{parent} {'is not a directory' if os.path.exists(parent) else 'does not exist'}")
    return path


def input_file(path):
    """argparse type of a file a script reads (a trace, a snapshot, a binary): checked when
    the command is read, not where a run of minutes first opens it."""
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is a directory; expected a file")
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{path}: no such file")
    return path


def program_file(path):
    """argparse type of a program a script runs (fraglab): checked when the command is read,
    and made absolute, since the scripts run it from their work directories too (a traced
    program runs where its inputs are)."""
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{path}: no such file (build fraglab first: see the README)")
    if not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(f"{path} is not executable")
    return os.path.abspath(path)


def output_dir(path):
    """argparse type of a directory a script writes into when it is done, made if absent:
    what exists of it must be a directory."""
    if not path:
        raise argparse.ArgumentTypeError("the directory name is empty")
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise argparse.ArgumentTypeError(f"{existing} is not a directory")
    return path


def common_arguments(parser, work_dir):
    """The options every table script takes."""
    parser.add_argument("--fraglab", default=DEFAULT_FRAGLAB, type=program_file)
    parser.add_argument("--out-dir", type=output_dir, default=os.path.join(ROOT, "results"))
    parser.add_argument("--work-dir", default=os.path.join(ROOT, "build", "data", work_dir),
                        help="where inputs are made and kept between runs")
    parser.add_argument("--quick", action="store_true", help="small inputs, a few seconds (for the tests)")
    parser.add_argument("--jobs", default=str(os.cpu_count() or 1))


def input_arguments(description, argv):
    """The options of a script that makes the inputs of others (program_traces.py,
    dl_workloads.py), as those would make them on their first run: the workflow
    (experiments/Snakefile) makes each once for every script that reads it."""
    parser = argparse.ArgumentParser(description=description, allow_abbrev=False)
    parser.add_argument("--fraglab", default=DEFAULT_FRAGLAB, type=program_file)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--quick", action="store_true", help="the tests' small inputs")
    return parser.parse_args(argv)


def at_least_one(text):
    """argparse type of a count of rounds or passes: an integer of at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("expected at least 1")
    return n


def distinct_names(text):
    """argparse type of a comma-separated list of names (policies, subjects): each one
    non-empty and none twice. `a,,b` would otherwise ask for a policy called "", and `a,a`
    measure one twice under one name, whose rows then cannot be told apart."""
    names = text.split(",")
    if "" in names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got an empty one in {text!r}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"{', '.join(twice)} given twice in {text!r}")
    return names


def trace_name(path):
    """The name a trace file's rows go by: bench_allocators names a trace by its file name up
    to the first dot (bench::load_in_memory)."""
    return os.path.basename(path).split(".")[0]


def repeated_trace_name(paths):
    """A message naming two different files of `paths` that share a trace name, whose rows
    would merge into one; None when each name is one file's (a path given twice is one file)."""
    path_of = {}
    for path in paths:
        trace = trace_name(path)
        if path_of.setdefault(trace, path) != path:
            return f"{path_of[trace]} and {path} are both the trace {trace}: rename one"
    return None


def rounds_argument(parser, kept):
    """--rounds N for a script with --quick (common_arguments): how many times it measures
    everything, `kept` saying what it keeps of them. Read it through rounds_of(args)."""
    parser.add_argument("--rounds", type=at_least_one, default=None,
                        help=f"rounds of the measurements (default 3, 1 with --quick); {kept}")


def rounds_of(args):
    """--rounds as given, else 3, or 1 with --quick."""
    return args.rounds if args.rounds is not None else 1 if args.quick else 3


def figures(out_dir, columns, rows, drawings):
    """Draws each (plot.py kind, output file, extra arguments) of `drawings` from `rows`
    through experiments/scripts/reproduce/plot.py (Debian's python3-matplotlib), via a temporary CSV that is
    removed whatever happens."""
    data = os.path.join(out_dir, f".figure-data.{os.getpid()}.csv")
    write_csv(data, [], columns, rows)
    try:
        for kind, output, args in drawings:
            run(["/usr/bin/python3", os.path.join(ROOT, "experiments", "scripts", "reproduce", "plot.py"), kind, data,
                 "-o", os.path.join(out_dir, output)] + list(args))
    finally:
        os.remove(data)
