"""The CPython workload traced for the program tables: builds words, counts them in a dict,
round-trips the counts through JSON and sorts them. Run with PYTHONMALLOC=malloc so that
every object goes through malloc instead of pymalloc's arenas.

    wordcount.py N    N thousand words of text (default 200)"""
import json
import random
import re
import sys

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 200
random.seed(1)
vocabulary = ["".join(random.choice("abcdefghij") for _ in range(random.randint(2, 12))) for _ in range(20 * scale)]
text = " ".join(random.choice(vocabulary) for _ in range(1000 * scale))
counts = {}
for word in re.findall(r"[a-j]+", text):
    counts[word] = counts.get(word, 0) + 1
document = json.dumps([{"word": w, "n": n, "tags": [w[:2], w[-2:]]} for w, n in counts.items()])
ranked = sorted(json.loads(document), key=lambda r: (-r["n"], r["word"]))
print(len(ranked), ranked[0]["word"])
