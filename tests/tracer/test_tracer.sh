#!/usr/bin/env bash
# The malloc tracer against a program that counts its own allocations (counting_program):
# every allocation function, threads, fork and exec, through `fraglab trace`.
set -u
fraglab=$(realpath "${1:?usage: test_tracer.sh FRAGLAB COUNTING_PROGRAM TRACER_LIBRARY|none}")
program=$(realpath "${2:?}")
tracer=${3:?}
if [[ $tracer == none ]]; then
  echo "SKIP: the tracer is not built under sanitizers (their runtime must be the first preloaded library)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"

# The counting program's events in a trace: "SIZE COUNT" per band size, "frees N" (frees of
# band blocks), "align SIZE A" where an alignment was recorded, "anomalies N" (frees of
# ids not live plus allocations under live ids, over the whole trace).
band() {
  "$fraglab" convert "$1" "$work/t.txt" 2>/dev/null || { echo "unreadable"; return; }
  awk '$1 == "a" { if ($2 in live) bad++; live[$2] = $3
                   if ($3 >= 77000 && $3 < 78000) { n[$3]++; if (NF >= 4) al[$3] = $4 } }
       $1 == "f" { if (!($2 in live)) bad++; else { if (live[$2] >= 77000 && live[$2] < 78000) f++; delete live[$2] } }
       END { for (s in n) print s, n[s]; print "frees", f + 0; for (s in al) print "align", s, al[s]; print "anomalies", bad + 0 }' \
    "$work/t.txt" | sort
}
files() { ls "$1"/counting_program.*.fbin 2>/dev/null; }
# Of the two files in DIR, the band counts of the one whose counts hold MARKER go to
# `marked`, the other's to `other`.
split_by_marker() {
  marked="" other=""
  for f in $(files "$1"); do
    c=$(band "$f")
    if [[ $c == *"$2"* ]]; then marked=$c; else other=$c; fi
  done
}

# Every allocation function, 200 times, into the default directory (the working directory).
mkdir "$work/calls" && (cd "$work/calls" && "$fraglab" trace -- "$program" calls 200 > "$work/calls.out" 2> "$work/calls.err")
expect "trace exits with the program's status" '[[ $? -eq 0 ]]'
expect "one trace file for one process" '[[ $(files "$work/calls" | wc -l) -eq 1 ]]'
expect "trace names the file it wrote" 'grep -q "counting_program\.[0-9]*\.fbin: [0-9]* events" "$work/calls.err"'
counts=$(band "$(files "$work/calls")")
while read -r size n; do
  expect "$size-byte allocations: the trace has as many as the program made ($n)" '[[ $counts == *"$size $n"* ]]'
done < "$work/calls.out"
expect "every band block's free is recorded (9 a call)" '[[ $counts == *"frees 1800"* ]]'
expect "memalign, posix_memalign, aligned_alloc and valloc record their alignment" \
  '[[ $counts == *"align 77004 64"* && $counts == *"align 77005 128"* && $counts == *"align 77824 256"* && $counts == *"align 77007 4096"* ]]'
expect "plain malloc records no alignment" '[[ $counts != *"align 77001"* ]]'
expect "no free of a block not live, no allocation of a live one" '[[ $counts == *"anomalies 0"* ]]'

# Threads racing on the same addresses.
"$fraglab" trace -o "$work/threads" -- "$program" threads 4 20000 > "$work/threads.out" 2>/dev/null
counts=$(band "$(files "$work/threads")")
total=$(awk '$1 >= 77100 && $1 < 77150 {s += $2} END {print s + 0}' <<<"$counts")
expect "4 threads x 20000: every allocation is in the trace" '[[ $total -eq $(cat "$work/threads.out") ]]'
expect "4 threads x 20000: every free is in the trace" '[[ $counts == *"frees 80000"* ]]'
expect "threads: no free of a block not live, no allocation of a live one" '[[ $counts == *"anomalies 0"* ]]'

# fork: the child's file begins with the 50 blocks it inherited; it leaves by _exit.
"$fraglab" trace -o "$work/fork" -- "$program" fork 50 30 > /dev/null 2>&1
expect "fork: a file for the parent and one for the child" '[[ $(files "$work/fork" | wc -l) -eq 2 ]]'
split_by_marker "$work/fork" "77201 30"
child=$marked parent=$other
expect "fork: the parent's 50 blocks, each freed once" '[[ $parent == *"77200 50"* && $parent == *"frees 50"* && $parent != *77201* ]]'
expect "fork: the child inherits the 50 and frees them with its own 30 (flushed at _exit)" \
  '[[ $child == *"77200 50"* && $child == *"77201 30"* && $child == *"frees 80"* ]]'
expect "fork: both traces are consistent" '[[ $parent == *"anomalies 0"* && $child == *"anomalies 0"* ]]'

# fork, the child returning from main: its file numbers the inherited blocks afresh, so the
# header's slots never exceed its allocations (the parent's numbering has gaps here).
"$fraglab" trace -o "$work/forkexit" -- "$program" fork-exit 40 25 > /dev/null 2>&1
expect "fork-exit: a file for the parent and one for the child" '[[ $(files "$work/forkexit" | wc -l) -eq 2 ]]'
split_by_marker "$work/forkexit" "77211 25"
child=$marked parent=$other
expect "fork-exit: the child's trace is readable and holds its 25 and the 40 inherited" \
  '[[ $child == *"77211 25"* && $child == *"77210 40"* && $child == *"frees 65"* && $child == *"anomalies 0"* ]]'
expect "fork-exit: the parent's trace is readable" '[[ $parent == *"77210 80"* && $parent == *"frees 80"* ]]'

# --only: a wrapper (here a shell script) that runs the program leaves no file of its own.
printf '#!/bin/sh\n"%s" calls 1 > /dev/null\nexit 0\n' "$program" > "$work/wrapper.sh"
chmod +x "$work/wrapper.sh"
"$fraglab" trace -o "$work/only" --only counting_program -- "$work/wrapper.sh" > /dev/null 2>&1
expect "--only keeps the program's trace and no other" \
  '[[ $(files "$work/only" | wc -l) -eq 1 && $(ls "$work/only" | wc -l) -eq 1 ]]'
"$fraglab" trace -o "$work/all" -- "$work/wrapper.sh" > /dev/null 2>&1
expect "without --only the wrapper's shell is traced too" '[[ $(ls "$work/all" | wc -l) -gt 1 ]]'
err=$("$fraglab" trace --only bin/sh -- true 2>&1); rc=$?
expect "--only refuses a path" '[[ $rc -eq 2 && $err == *"--only: expected an executable"* ]]'

# exec: the image that execs leaves its trace complete; the new image gets its own file.
"$fraglab" trace -o "$work/exec" -- "$program" exec 40 > /dev/null 2>&1
expect "exec: two files for one pid" '[[ $(files "$work/exec" | wc -l) -eq 2 ]]'
split_by_marker "$work/exec" "77300 40"
before=$marked after=$other
expect "exec: the 40 blocks made before exec are in the first file" '[[ -n $before && $before == *"frees 0"* ]]'
expect "exec: the new image traced every call" '[[ $after == *"77001 1"* && $after == *"77824 1"* && $after == *"frees 9"* ]]'

# Errors: no program, a program that does not exist.
"$fraglab" trace -o "$work/none" > /dev/null 2>&1
expect "trace without a program is an error" '[[ $? -eq 2 ]]'
"$fraglab" trace -o "$work/none" -- "$work/does-not-exist" > /dev/null 2>&1
expect "trace of a missing program exits 127, as a shell would" '[[ $? -eq 127 ]]'

report tracer
