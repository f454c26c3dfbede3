"""Writes the groff -ms document typeset for the program tables (groff, then Ghostscript
renders groff's PostScript): N sections of paragraphs and a tbl table each.

    make_document.py N OUT.ms"""
import random
import sys

sections, out = int(sys.argv[1]), sys.argv[2]
random.seed(2)
words = ["allocator", "fragmentation", "policy", "coalesce", "split", "chunk", "heap", "free", "list", "tree",
         "bin", "segment", "boundary", "tag", "first", "best", "fit", "address", "order"]
lines = [".TL", "A generated document", ".AU", "fraglab", ".NH", "Introduction"]
for s in range(sections):
    lines += [".NH 2", f"Section {s}"]
    for _ in range(8):
        lines += [".PP", " ".join(random.choice(words) for _ in range(random.randint(40, 120))) + "."]
    lines += [".TS", "center box;", "l n n.", "name\tsize\tcount"]
    lines += [f"{random.choice(words)}\t{random.randint(1, 99999)}\t{random.randint(1, 99)}" for _ in range(10)]
    lines += [".TE"]
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
