#!/usr/bin/env bash
# What fraglab does to the files it is pointed at (docs/reliability.md, "Outputs and
# inputs"): an output is changed only by a run that succeeded and only as its kind of file
# expects (devices and FIFOs written through, links followed, modes and hard links kept), an
# input is never written, and every input a shell user has (pipes, `-`, compressed files) is
# read as the file it holds.
set -u
fraglab=$(realpath "${1:?usage: test_safe_io.sh PATH_TO_FRAGLAB}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"
skip() { echo "SKIP: $*"; }
leftovers() { find "$work" -name '*.fraglab-*' -o -name '*.tmp.*' | wc -l; }

"$fraglab" gen phases --phases 4 --objects 300 -o "$work/t.trace" 2>/dev/null
cp "$work/t.trace" "$work/t.orig"
"$fraglab" replay "$work/t.trace" -p tlsf --format csv --repeat 0 > "$work/expected.csv"
R=("$fraglab" replay "$work/t.trace" -p tlsf --format csv --repeat 0)

# --- outputs that are not regular files -------------------------------------------------
if [[ $(id -u) -eq 0 ]] && mknod "$work/null" c 1 3 2>/dev/null; then
  "${R[@]}" -o "$work/null"; rc=$?
  expect "-o at a character device writes through it and leaves it a device" '[[ $rc -eq 0 && -c $work/null ]]'
else
  skip "mknod needs root: the character device case runs where the tests run as root"
fi
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/from_fifo" &
reader=$!
"${R[@]}" -o "$work/fifo"; rc=$?
wait $reader
expect "-o at a FIFO writes through it and leaves it a FIFO" '[[ $rc -eq 0 && -p $work/fifo ]] && cmp -s "$work/from_fifo" "$work/expected.csv"'
out=$("${R[@]}" -o -); rc=$?
expect "-o - writes to standard output" '[[ $rc -eq 0 && "$out" == "$(cat "$work/expected.csv")" ]]'
out=$("${R[@]}" -o /dev/stdout); rc=$?
expect "-o /dev/stdout writes to standard output" '[[ $rc -eq 0 && "$out" == "$(cat "$work/expected.csv")" ]]'
if [[ -c /dev/full ]]; then
  err=$("${R[@]}" -o /dev/full 2>&1); rc=$?
  expect "-o /dev/full reports the full disk" '[[ $rc -ne 0 && $err == *"/dev/full: write failed: No space left on device"* ]]'
  err=$("${R[@]}" 2>&1 > /dev/full); rc=$?
  expect "standard output on a full disk is an error, not exit 0" '[[ $rc -ne 0 && $err == *"standard output: write failed"* ]]'
fi

# --- regular files: links, modes, hard links --------------------------------------------
echo old > "$work/real.csv"
ln -s real.csv "$work/link.csv"
"${R[@]}" -o "$work/link.csv"; rc=$?
expect "-o at a symbolic link writes its target and keeps the link" \
  '[[ $rc -eq 0 && -L $work/link.csv ]] && cmp -s "$work/real.csv" "$work/expected.csv"'
ln -s new.csv "$work/dangling.csv"
"${R[@]}" -o "$work/dangling.csv"; rc=$?
expect "-o at a dangling link creates what it points to" '[[ $rc -eq 0 && -L $work/dangling.csv && -f $work/new.csv ]]'
echo secret > "$work/private.csv"
chmod 600 "$work/private.csv"
"${R[@]}" -o "$work/private.csv"
expect "a 0600 file stays 0600" '[[ $(stat -c %a "$work/private.csv") == 600 ]]'
echo old > "$work/linked.csv"
ln "$work/linked.csv" "$work/other_name.csv"
"${R[@]}" -o "$work/linked.csv"; rc=$?
expect "a file with two hard links is rewritten in place: both names see the result" \
  '[[ $rc -eq 0 && $(stat -c %h "$work/linked.csv") -eq 2 ]] && cmp -s "$work/other_name.csv" "$work/expected.csv"'
(umask 077 && "${R[@]}" -o "$work/umask.csv")
expect "a new file gets the mode the umask allows" '[[ $(stat -c %a "$work/umask.csv") == 600 ]]'
"${R[@]}" -o "$work/plain.csv"
expect "a new file otherwise gets 0644 under umask 022" '[[ $(umask) != 0022 || $(stat -c %a "$work/plain.csv") == 644 ]]'

# --- an output that is an input ---------------------------------------------------------
for command in "replay $work/t.trace -p tlsf -o $work/t.trace" "replay $work/t.trace -p tlsf --timeseries $work/t.trace" \
               "sweep $work/t.trace -p tlsf --vary sli=3,4 -o $work/t.trace" "capacity $work/t.trace -p tlsf -o $work/t.trace" \
               "dump $work/t.trace -p tlsf -o $work/t.trace" "convert $work/t.trace $work/t.trace"; do
  err=$("$fraglab" $command 2>&1); rc=$?
  expect "${command%% *} refuses to write over its input" \
    '[[ $rc -eq 2 && $err == *"is the input $work/t.trace"* ]] && cmp -s "$work/t.trace" "$work/t.orig"'
done
ln -s t.trace "$work/t_link.trace"
err=$("${R[@]}" -o "$work/t_link.trace" 2>&1); rc=$?
expect "nor over its input through a link" '[[ $rc -eq 2 ]] && cmp -s "$work/t.trace" "$work/t.orig"'
printf 'id,lower,upper,size\n0,0,2,8\n1,1,3,4\n' > "$work/p.csv"
cp "$work/p.csv" "$work/p.orig"
for command in "plan $work/p.csv -o $work/p.csv" "plan $work/p.csv --placement $work/p.csv" "plan $work/t.trace -o $work/t.trace" \
               "plan $work/t.trace --placement $work/t_link.trace" "tune $work/t.trace -o $work/t.trace" \
               "tune $work/t.trace -o $work/t_link.trace"; do
  err=$("$fraglab" $command 2>&1); rc=$?
  expect "${command%% *} refuses to write over its input (${command##* })" \
    '[[ $rc -eq 2 && $err == *"is the input "* ]] && cmp -s "$work/t.trace" "$work/t.orig" && cmp -s "$work/p.csv" "$work/p.orig"'
done
err=$("$fraglab" record-tf -o "$work/p.csv" -- cat "$work/p.csv" 2>&1); rc=$?
expect "record-tf refuses to write over a file its program is given" '[[ $rc -eq 2 && $err == *"is the input "* ]] && cmp -s "$work/p.csv" "$work/p.orig"'
err=$("${R[@]}" -o - --timeseries /dev/stdout 2>&1); rc=$?
expect "two outputs to standard output are refused" '[[ $rc -eq 2 && $err == *"name the same file"* ]]'

# --- checked before any work ------------------------------------------------------------
err=$("$fraglab" gen random --allocations 2000000 -o /proc/fraglab-nowhere.trace 2>&1); rc=$?
expect "an output directory that cannot take a file is refused before the work" \
  '[[ $rc -eq 2 && $err == *"cannot create a file in /proc"* ]]'

# --- temporaries: unique, and removed when a signal ends the run ------------------------
for i in 1 2 3 4 5 6; do "$fraglab" gen random --seed $i --allocations 20000 -o "$work/in$i.fbin" 2>/dev/null; done
for i in 1 2 3 4 5 6; do "$fraglab" convert "$work/in$i.fbin" "$work/race.trace" 2>/dev/null & done
wait
ok=0
for i in 1 2 3 4 5 6; do
  "$fraglab" convert "$work/in$i.fbin" "$work/want$i.trace" 2>/dev/null
  cmp -s "$work/race.trace" "$work/want$i.trace" && ok=1
done
expect "six converts racing to one file leave one whole result" '[[ $ok -eq 1 && $(leftovers) -eq 0 ]]'
for sig in INT TERM HUP; do
  rm -f "$work/big.trace"
  # A shell starts background jobs with SIGINT ignored, and fraglab keeps what it inherits
  # ignored (as nohup users expect): env gives it the default back.
  env --default-signal=$sig "$fraglab" gen random --allocations 4000000 -o "$work/big.trace" 2>/dev/null &
  pid=$!
  for _ in $(seq 400); do [[ -n $(find "$work" -name 'big.trace.*') ]] && break; sleep 0.05; done
  seen=$(find "$work" -name 'big.trace.*' | wc -l)
  kill -$sig $pid
  wait $pid; rc=$?
  expect "SIG$sig while the output is written removes its temporary ($seen seen) and leaves no output" \
    '[[ $seen -eq 1 && $rc -ne 0 && $(leftovers) -eq 0 && ! -e $work/big.trace ]]'
done

# --- inputs: pipes, standard input, compression -----------------------------------------
out=$(cat "$work/t.trace" | "$fraglab" replay - -p tlsf --format csv --repeat 0 | cut -d, -f2-)
expect "- reads the trace from standard input" '[[ "$out" == "$(cut -d, -f2- "$work/expected.csv")" ]]'
out=$(cat "$work/t.trace" | "$fraglab" replay /dev/stdin -p tlsf --format csv --repeat 0 | cut -d, -f2-)
expect "/dev/stdin from a pipe is read whole (format detection does not eat its start)" \
  '[[ "$out" == "$(cut -d, -f2- "$work/expected.csv")" ]]'
"$fraglab" convert "$work/t.trace" "$work/t.fbin" 2>/dev/null
out=$("$fraglab" replay <(cat "$work/t.fbin") -p tlsf --format csv --repeat 0 | cut -d, -f2-)
expect "a binary trace from a process substitution replays (read again on every pass)" \
  '[[ "$out" == "$(cut -d, -f2- "$work/expected.csv")" ]]'
gzip -c "$work/t.fbin" > "$work/t.fbin.gz"
out=$("$fraglab" replay "$work/t.fbin.gz" -p tlsf --format csv --repeat 0 | cut -d, -f2-)
expect "a gzip-compressed trace is read as the trace it holds" '[[ "$out" == "$(cut -d, -f2- "$work/expected.csv")" ]]'
if command -v zstd > /dev/null; then
  zstd -q -c "$work/t.trace" > "$work/t.trace.zst"
  out=$(cat "$work/t.trace.zst" | "$fraglab" replay - -p tlsf --format csv --repeat 0 | cut -d, -f2-)
  expect "a zstd-compressed trace on standard input is read" '[[ "$out" == "$(cut -d, -f2- "$work/expected.csv")" ]]'
  # A frame whose content ends exactly where zstd's output buffer (128 KiB) does.
  python3 -c 'import sys; t = "".join(f"a {i} 64\n" for i in range(12000)); sys.stdout.write(t + "#" * (131071 - len(t)) + "\n")' > "$work/exact.trace"
  zstd -q -c "$work/exact.trace" > "$work/exact.trace.zst"
  err=$("$fraglab" info "$work/exact.trace.zst" 2>&1); rc=$?
  expect "a zstd file of exactly 131072 bytes is read, not called truncated" '[[ $rc -eq 0 && $(stat -c %s "$work/exact.trace") -eq 131072 && $err == *"events: 12000"* ]]'
  err=$(cat "$work/exact.trace" "$work/exact.trace" | zstd -q -c | "$fraglab" info - 2>&1); rc=$?
  expect "and one of 262144 from standard input" '[[ $rc -eq 0 && $err == *"events: 24000"* ]]'
else
  skip "no zstd program to compress with"
fi
# Decompression bombs: zeros are refused at their first bytes, text that grows past the
# ratio as it grows, neither after filling the disk.
if command -v zstd > /dev/null; then
  head -c 200000000 /dev/zero | zstd -q -c > "$work/zeros.zst"
  err=$("$fraglab" info "$work/zeros.zst" 2>&1); rc=$?
  expect "200 MB of zeros in $(stat -c %s "$work/zeros.zst") bytes of zstd is refused at once" '[[ $rc -eq 2 && $err == *"zeros.zst: decompressed, it starts with zero bytes"* ]]'
  yes $'a 1 64\nf 1' | head -n 14000000 | zstd -q -c > "$work/bomb.trace.zst"
  err=$("$fraglab" info "$work/bomb.trace.zst" 2>&1); rc=$?
  expect "a trace that decompresses past 2000 times its size is refused as a bomb" \
    '[[ $rc -eq 2 && $err == *"bomb.trace.zst: decompresses to more than 2000 times its compressed size"*"FRAGLAB_MAX_DECOMPRESSION_RATIO"* ]]'
  out=$(FRAGLAB_MAX_DECOMPRESSION_RATIO=100000 "$fraglab" info - < "$work/bomb.trace.zst" 2>&1); rc=$?
  expect "and read when a larger ratio is allowed" '[[ $rc -eq 0 && $out == *"events: 14000000"* ]]'
fi
head -c 300 "$work/t.fbin.gz" > "$work/cut.gz"
err=$("$fraglab" replay "$work/cut.gz" -p tlsf -o "$work/never.csv" 2>&1); rc=$?
expect "a truncated gzip file is an error naming it" '[[ $rc -eq 2 && $err == *"cut.gz: compressed byte"*"truncated gzip data"* && ! -e $work/never.csv ]]'
printf '\xfd7zXZ\x00\x00\x04' > "$work/t.xz"
err=$("$fraglab" info "$work/t.xz" 2>&1); rc=$?
expect "an xz file is named as xz, with the way to read it" '[[ $rc -eq 2 && $err == *"t.xz: xz-compressed: decompress it first"* ]]'
printf 'BZh91AY&SY' > "$work/t.bz2"
err=$("$fraglab" info "$work/t.bz2" 2>&1); rc=$?
expect "a bzip2 file is named as bzip2" '[[ $rc -eq 2 && $err == *"bzip2-compressed"* ]]'

# --- what the outputs print of names from outside ----------------------------------------
cp "$work/t.trace" "$work/$(printf 'bad\xff|name\x1b[2J.trace')"
bad=$(printf "$work/bad\xff|name\x1b[2J.trace")
"$fraglab" replay "$bad" -p tlsf --format json --repeat 0 > "$work/o.json"
expect "JSON stays valid for a file name that is not UTF-8" \
  '/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[0][\"trace\"].startswith(\"bad\")" "$work/o.json"'
"$fraglab" replay "$bad" -p tlsf --format md --repeat 0 > "$work/o.md"
expect "Markdown escapes | and shows control bytes" \
  'grep -qF "\|name\x1b\[2J.trace" "$work/o.md" && ! grep -q $'"'"'\x1b'"'"' "$work/o.md"'
"$fraglab" replay "$bad" -p tlsf --repeat 0 > "$work/o.txt"
expect "the terminal table prints no control character from a file name" \
  'grep -qF "name\x1b[2J.trace" "$work/o.txt" && ! grep -q $'"'"'\x1b'"'"' "$work/o.txt"'

# --- options that must terminate and mean one thing ---------------------------------------
err=$(timeout 20 "$fraglab" replay "$work/t.trace" -p 'compose:index=tree,fit=best,growth=doubling,growth_factor=1' 2>&1); rc=$?
expect "doubling growth by a factor of 1 is refused, not run forever" '[[ $rc -eq 2 && $err == *"at least 1.001 for doubling growth"* ]]'
err=$("$fraglab" sweep "$work/t.trace" -p tf_bfc --vary split_ratio=1,1.0 2>&1); rc=$?
expect "--vary split_ratio=1,1.0 is refused: one setting twice" '[[ $rc -eq 2 && $err == *"split_ratio=1.0 is the same setting as 1"* ]]'
err=$("$fraglab" sweep "$work/t.trace" -p tf_bfc --vary max_internal_fragmentation=1MiB,1048576 2>&1); rc=$?
expect "--vary of one size in two spellings is refused" '[[ $rc -eq 2 && $err == *"is the same setting as 1MiB"* ]]'
# AddressSanitizer reserves terabytes of address space for its shadow, so a sanitizer
# build cannot start under the limit: there the run goes without it.
limit="ulimit -v 4000000"
(eval "$limit"; "$fraglab" policies > /dev/null 2>&1) || limit=":"
out=$( (eval "$limit"; timeout 60 "$fraglab" sweep "$work/t.trace" -p tlsf --vary sli=2,3,4 --jobs 100000 --repeat 0 --format csv) 2>&1); rc=$?
expect "--jobs 100000 under a memory limit runs (threads capped to the cores and cells)" '[[ $rc -eq 0 && $(grep -c tlsf <<<"$out") -eq 3 ]]'

# --- merge reads the CSV it writes ------------------------------------------------------
cp "$work/t.trace" "$work/a,b.trace"
spec='compose:index=seglist,fit=best,split=never'
for i in 1 2; do
  "$fraglab" sweep "$work/a,b.trace" -p "$spec" --vary sli=2,3,4 --shard $i/2 --repeat 0 --format csv -o "$work/q$i.csv"
done
"$fraglab" sweep "$work/a,b.trace" -p "$spec" --vary sli=2,3,4 --repeat 0 --format csv -o "$work/q.csv"
"$fraglab" merge "$work/q1.csv" "$work/q2.csv" --format csv -o "$work/qm.csv"; rc=$?
expect "merge joins parts whose trace and policy hold commas (quoted fields)" '[[ $rc -eq 0 ]] && cmp -s "$work/qm.csv" "$work/q.csv"'
printf 'cell,x,sweep_cells,sweep_id\n0,"open,1,abc\n' > "$work/open.csv"
err=$("$fraglab" merge "$work/open.csv" 2>&1); rc=$?
expect "merge names a quote that is never closed" '[[ $rc -eq 2 && $err == *"open.csv:2: a quoted field that starts here is never closed"* ]]'

# --- hostile pickles --------------------------------------------------------------------
/usr/bin/python3 -c "
import sys
d = 200000
sys.stdout.buffer.write(b'\x80\x02' + b']' * d + b'a' * (d - 1) + b'.')" > "$work/deep.pickle"
for command in info replay verify; do
  extra=""; [[ $command == replay ]] && extra="-p tlsf"
  err=$(timeout 20 "$fraglab" $command "$work/deep.pickle" $extra 2>&1); rc=$?
  expect "$command of a pickle nested 200,000 deep is refused cleanly (no crash, no hang)" \
    '[[ $rc -eq 2 && $err == *"deep.pickle"* ]]'
done

# --- gen streams its output --------------------------------------------------------------
peak_kib() {  # COMMAND...: the peak resident memory of COMMAND, in KiB
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
small=$(peak_kib "$fraglab" gen random --allocations 500000 -o "$work/small.fbin")
large=$(peak_kib "$fraglab" gen random --allocations 4000000 -o "$work/large.fbin")
expect "gen needs memory for the live blocks, not the events (peak KiB: $small for 1M events, $large for 8M)" \
  '[[ -n $small && -n $large && $((large * 4)) -lt $((small * 5)) ]]'
expect "gen's streamed file holds every event" \
  '[[ $("$fraglab" info "$work/large.fbin" 2>/dev/null | grep "^events:") == "events: 8000000" ]]'
rm -f "$work/small.fbin" "$work/large.fbin"

# --- --keep-going -----------------------------------------------------------------------
printf 'a 1 100\na 2 abc\n' > "$work/broken.trace"
out=$("$fraglab" replay "$work/t.trace" "$work/broken.trace" -p tlsf --repeat 0 --format csv --keep-going 2> "$work/kg.err"); rc=$?
expect "--keep-going leaves out the unreadable trace, replays the rest, and exits 1" \
  '[[ $rc -eq 1 && $(grep -c "^t.trace," <<<"$out") -eq 1 && $(cat "$work/kg.err") == *"left out: $work/broken.trace:2:"* ]]'
"$fraglab" replay "$work/t.trace" "$work/broken.trace" -p tlsf --repeat 0 > /dev/null 2>&1; rc=$?
expect "without --keep-going the unreadable trace stops the run" '[[ $rc -eq 2 ]]'
# A binary trace whose header is sound and whose records are not is found as it is decoded.
"$fraglab" convert "$work/t.trace" "$work/bad-record.fbin" 2>/dev/null
printf '\x10' | dd of="$work/bad-record.fbin" bs=1 seek=64 conv=notrunc status=none
out=$("$fraglab" sweep "$work/t.trace" "$work/bad-record.fbin" -p tlsf --vary sli=4,5 --repeat 0 --format csv --keep-going 2> "$work/kg2.err"); rc=$?
expect "--keep-going also leaves out a binary trace whose bad record only a pass finds" \
  '[[ $rc -eq 1 && $(grep -c "^[0-9]*,t.trace," <<<"$out") -eq 2 && $(cat "$work/kg2.err") == *"left out: $work/bad-record.fbin: byte 64: unknown event tag 0x10"* ]]'

report safe_io
