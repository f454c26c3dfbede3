#!/usr/bin/env bash
# fraglab report: one HTML file (or Markdown and its SVG figures) with the inputs, the table
# replay shows, its legend, per trace three figures of the same numbers, and what made it;
# nothing fetched; bad input writes nothing.
set -u
fraglab=${1:?usage: test_report.sh PATH_TO_FRAGLAB}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/../support/expect.sh"

"$fraglab" gen phases --seed 3 --phases 6 --objects 800 -o "$work/p.trace" 2>/dev/null
"$fraglab" gen random --seed 4 --allocations 20000 -o "$work/r.trace" 2>/dev/null
policies=best_fit,tlsf,tf_bfc
"$fraglab" report "$work/p.trace" "$work/r.trace" -p $policies --backend simulated -o "$work/report.html" 2>/dev/null; rc=$?
html=$work/report.html
expect "report writes one HTML file (exit $rc)" '[[ $rc -eq 0 && -s $html && $(ls "$work" | grep -c "\.svg$") -eq 0 ]]'
expect "three figures a trace, inline" '[[ $(grep -c "<svg " "$html") -eq 6 ]]'
expect "the footprint figures draw each policy and live bytes once" \
  '[[ $(grep -c "<polyline" "$html") -eq 8 && $(grep -c "<title>live (every policy)</title>" "$html") -eq 2 ]]'
# The table's cells are replay's, in the units a reader sees.
"$fraglab" replay "$work/p.trace" "$work/r.trace" -p $policies --backend simulated --repeat 0 --format csv > "$work/r.csv"
while IFS=, read -r trace policy reserved frag4; do
  shown=$(python3 -c 'import sys; b=int(sys.argv[1]); u=["B","KiB","MiB","GiB"]; i=0; v=float(b)
while v >= 1024 and i < 3: v /= 1024; i += 1
print(f"{b >> (10*i)} {u[i]}" if b % (1 << (10*i)) == 0 else (f"{v:.3f} {u[i]}" if v < 10 else f"{v:.2f} {u[i]}"))' "$reserved")
  percent=$(python3 -c 'import sys; print(f"{float(sys.argv[1])*100:.1f}")' "$frag4")
  expect "$trace/$policy: its peak reserved ($shown) in the table and its frag4 ($percent %) in the figure" \
    'grep -q "<td>$shown</td>" "$html" && grep -q "<title>$policy: $percent %</title>" "$html"'
done < <(python3 -c 'import csv,sys; [print(",".join((r["trace"], r["policy"], r["peak_reserved_bytes"], r["frag4"]))) for r in csv.DictReader(open(sys.argv[1]))]' "$work/r.csv")
"$fraglab" capacity "$work/p.trace" -p tlsf --backend simulated --format csv > "$work/c.csv"
least=$(python3 -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))["min_capacity_bytes"])' "$work/c.csv")
expect "the least-capacity figure has capacity's number ($least)" \
  'grep -q "<title>tlsf: $(python3 -c "print(f\"{$least/2**20:.3g}\")") MiB</title>" "$html"'
expect "every column shown is explained" 'grep -q "<dt>frag4</dt><dd>peak reserved / peak live - 1" "$html"'
expect "it says what made it: command, commit, machine, date" \
  'grep -q "fraglab report .*-p $policies" "$html" && grep -q "fraglab commit " "$html" && grep -q "cores, 20[0-9][0-9]-" "$html"'
expect "it fetches nothing (no script, no link out)" '! grep -qiE "<script|<link|src=\"http|href=\"http" "$html"'

# Markdown: the figures beside it, named after it.
"$fraglab" report "$work/p.trace" -p $policies --backend simulated -o "$work/rep.md" 2>/dev/null; rc=$?
expect "Markdown: the report and its three figures ($rc)" \
  '[[ $rc -eq 0 && -s $work/rep.md && -s $work/rep-1.svg && -s $work/rep-3.svg && ! -e $work/rep-4.svg ]] && grep -q "](rep-2.svg)" "$work/rep.md"'
"$fraglab" report "$work/p.trace" -p $policies --backend simulated -o "$work/rep.md" 2>/dev/null; rc=$?
expect "a second report replaces the figures the first wrote ($rc)" '[[ $rc -eq 0 && -s $work/rep-3.svg ]]'
echo "someone's notes" > "$work/mine-2.svg"
err=$("$fraglab" report "$work/p.trace" -p $policies --backend simulated -o "$work/mine.md" 2>&1); rc=$?
expect "a file beside the report that no report wrote is never replaced ($rc)" \
  '[[ $rc -eq 2 && $err == *"mine-2.svg: exists and is not a figure an earlier report wrote"* && $(cat "$work/mine-2.svg") == "someone'"'"'s notes" && ! -e $work/mine.md && ! -e $work/mine-1.svg ]]'
# Names and labels from outside are shown, never run, in Markdown.
cp "$work/p.trace" "$work/<img src=x>.trace"
"$fraglab" report "$work/<img src=x>.trace" -p 'tlsf@<script>alert(1)</script>' --backend simulated -o "$work/x.md" 2>/dev/null; rc=$?
expect "Markdown escapes a file name and an @LABEL ($rc)" \
  '[[ $rc -eq 0 ]] && ! grep -q "<script>\|<img" "$work/x.md" && grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$work/x.md" && grep -q "&lt;img src=x&gt;.trace" "$work/x.md"'
out=$("$fraglab" replay "$work/<img src=x>.trace" -p 'tlsf@<i>x</i>' --backend simulated --repeat 0 --format md 2>/dev/null)
expect "and so does replay --format md" '[[ $out == *"&lt;img src=x&gt;.trace"* && $out == *"&lt;i&gt;x&lt;/i&gt;"* && $out != *"<i"* ]]'
# Within a capacity there is no least capacity to draw: two figures.
"$fraglab" report "$work/p.trace" -p $policies --backend simulated --capacity 64MiB -o "$work/cap.html" 2>/dev/null
expect "within --capacity, two figures" '[[ $(grep -c "<svg " "$work/cap.html") -eq 2 ]]'

# Bad input writes nothing.
for bad in "$work/missing.trace -p tlsf -o $work/bad.html" "$work/p.trace -p no_such_policy -o $work/bad.html" \
           "$work/p.trace -p tlsf -o $work/bad.txt" "$work/p.trace -p tlsf"; do
  # shellcheck disable=SC2086
  err=$("$fraglab" report $bad 2>&1); rc=$?
  expect "report $bad is refused ($err)" '[[ $rc -eq 2 && ! -e $work/bad.html && ! -e $work/bad.txt ]]'
done
"$fraglab" report "$work/missing.trace" -p tlsf -o "$work/bad.md" >/dev/null 2>&1
expect "a refused Markdown report leaves no figure either" '[[ ! -e $work/bad.md && ! -e $work/bad-1.svg ]]'
report test_report
