#!/usr/bin/env python3
"""Chooses the salience search's anchors again: for each default pattern, the four of its bytes
and the bucket that make real outputs yield the fewest false candidates.

The vector search (crates/core/src/trim/salience/anchors) compares only *candidates* with the
patterns: positions where, for some bucket, each of the next four bytes has a low and a high
nibble that one of the bucket's anchors has at that place. A bucket accepts any mix of its
anchors' nibbles, so an anchor chosen badly makes common text a candidate, and the test
`real_outputs_make_few_candidates_beyond_their_patterns` holds every output of the corpus to at
most one false candidate in 4,000 bytes.

This reads the table `ANCHORED` from the module, every `*.out` of the folders given (the
corpus) and the build log the perf gate cuts (benches/inputs `log_of`, made here alike: its
warnings are the true anchors the gate pays for), and searches coordinate by coordinate (one pattern's anchor and bucket at a time, every
choice tried, the best kept) until no change helps. What it lowers: the false candidates per
4,000 bytes of each output (over the bound weighs a thousand times more), and a tenth as much the
patterns compared per 4,000 bytes (at each candidate, every pattern of each bucket that accepts
it: the search's cost beyond the kernel). The counts are made over the distinct four-byte
windows, each weighted by how often each output holds it. It prints, per output, the
false candidates per 4,000 bytes, and with --write puts the new table into the module.

    interop/.venv-anchors/bin/python scripts/choose-anchors.py tests/corpus [--write]

(It needs numpy and scipy: the anchors' venv that interop/setup.sh installs has both.)
"""

import re
import sys
from pathlib import Path

import numpy as np
from scipy import sparse

MODULE = Path(__file__).resolve().parent.parent / "crates/core/src/trim/salience/anchors/mod.rs"
BUCKETS = 8
LEN = 4
BOUND = 4_000  # bytes per false candidate, at most one


def rust_str(literal):
    return literal.encode().decode("unicode_escape").encode("latin-1")


def read_table(text):
    body = re.search(r"const ANCHORED: \[Anchored; \d+\] = \[\n(.*?)\n\];", text, re.S)
    rows = re.findall(r'anchored\("((?:[^"\\]|\\.)*)", (\d+), (\d+)\)', body.group(1))
    return [(rust_str(p), int(at), int(b)) for p, at, b in rows], body


def build_log(size=1 << 20):
    """The perf gate's build log (benches/inputs/mod.rs, `log_of`), as it makes it."""
    lines, total, i = [], 0, 0
    while total < size:
        if i % 16 == 0:
            line = f"{i:>10} warning: unused variable `naïve_π` — см. документацию\n"
        else:
            line = f"{i:>10} compiling crate_{i % 97} v0.1.{i % 13} (build script)\n"
        lines.append(line)
        total += len(line.encode())
        i += 1
    return "".join(lines).encode()


def windows(outputs):
    """The distinct four-byte windows of the outputs (as uint32) and a matrix of their counts."""
    grams, rows, cols, names, sizes = [], [], [], [], []
    for name, raw in outputs:
        data = np.frombuffer(raw, dtype=np.uint8)
        if len(data) < LEN:
            continue
        g = (
            data[:-3].astype(np.uint32)
            | data[1:-2].astype(np.uint32) << 8
            | data[2:-1].astype(np.uint32) << 16
            | data[3:].astype(np.uint32) << 24
        )
        unique, counts = np.unique(g, return_counts=True)
        grams.append(unique)
        rows.append(counts)
        cols.append(np.full(len(unique), len(names)))
        names.append(name)
        sizes.append(len(data))
    every = np.concatenate(grams)
    distinct, inverse = np.unique(every, return_inverse=True)
    matrix = sparse.csr_matrix(
        (np.concatenate(rows), (np.concatenate(cols), inverse)), shape=(len(names), len(distinct))
    )
    return distinct, matrix, names, np.array(sizes)


class Search:
    def __init__(self, table, distinct, matrix, sizes):
        self.patterns = [p for p, _, _ in table]
        self.choice = [(at, b) for _, at, b in table]
        self.bytes = [((distinct >> (8 * j)) & 0xFF).astype(np.uint8) for j in range(LEN)]
        self.matrix = matrix
        self.sizes = sizes
        self.as_int = distinct
        self.masks = [self.bucket_mask(b) for b in range(BUCKETS)]

    def anchor(self, i, at=None):
        at = self.choice[i][0] if at is None else at
        return self.patterns[i][at : at + LEN]

    def bucket_mask(self, bucket, choice=None):
        choice = choice or self.choice
        members = [i for i, (_, b) in enumerate(choice) if b == bucket]
        if not members:
            return np.zeros(len(self.as_int), dtype=bool)
        mask = np.ones(len(self.as_int), dtype=bool)
        for j in range(LEN):
            low = np.zeros(16, dtype=bool)
            high = np.zeros(16, dtype=bool)
            for i in members:
                byte = self.patterns[i][choice[i][0] + j]
                low[byte & 15] = True
                high[byte >> 4] = True
            accept = (low[np.arange(256) & 15] & high[np.arange(256) >> 4])
            mask &= accept[self.bytes[j]]
        return mask

    def false_per_output(self, masks, choice):
        candidate = np.zeros(len(self.as_int), dtype=bool)
        for mask in masks:
            candidate |= mask
        anchors = {
            int.from_bytes(self.patterns[i][at : at + LEN], "little") for i, (at, _) in enumerate(choice)
        }
        true = np.isin(self.as_int, np.fromiter(anchors, dtype=np.uint32))
        return self.matrix @ (candidate & ~true).astype(np.int64)

    def compares(self, masks, choice):
        """Per output, the patterns compared with the text: at each candidate, every pattern of
        each bucket that accepts it (true anchors too: what a search costs beyond the kernel)."""
        sizes = np.bincount([b for _, b in choice], minlength=BUCKETS)
        weighted = np.zeros(len(self.as_int), dtype=np.int64)
        for bucket, mask in enumerate(masks):
            weighted += mask.astype(np.int64) * int(sizes[bucket])
        return self.matrix @ weighted

    def score(self, false, compares=None):
        # The outputs' rates summed, a rate over the bound weighing a thousand times more: smooth
        # enough for a search one choice at a time to find its way down; then the comparisons
        # per 4,000 bytes, a tenth as much.
        per = false * BOUND / self.sizes
        score = float(per.sum() + 1000 * np.maximum(per - 1, 0).sum())
        if compares is not None:
            score += 0.1 * float((compares * BOUND / self.sizes).sum())
        return score

    def run(self):
        best = self.evaluate(self.masks, self.choice)
        self.report("start", best)
        improved = True
        while improved:
            improved = False
            for i, pattern in enumerate(self.patterns):
                for at in range(len(pattern) - LEN + 1):
                    for bucket in range(BUCKETS):
                        if (at, bucket) == self.choice[i]:
                            continue
                        choice = list(self.choice)
                        old = choice[i][1]
                        choice[i] = (at, bucket)
                        masks = list(self.masks)
                        masks[old] = self.bucket_mask(old, choice)
                        masks[bucket] = self.bucket_mask(bucket, choice)
                        score = self.evaluate(masks, choice)
                        if score < best:
                            best, self.choice, self.masks = score, choice, masks
                            improved = True
            self.report("round", best)
        return best

    def evaluate(self, masks, choice):
        return self.score(self.false_per_output(masks, choice), self.compares(masks, choice))

    def report(self, when, score):
        per = self.false_per_output(self.masks, self.choice) * BOUND / self.sizes
        compares = self.compares(self.masks, self.choice) * BOUND / self.sizes
        print(
            f"{when}: score {score:.2f}, {(per > 1).sum()} outputs over the bound, worst {per.max():.2f}, "
            f"patterns compared per {BOUND:,} bytes: mean {compares.mean():.1f}, most {compares.max():.1f}"
        )


def rust_literal(pattern):
    out = ""
    for ch in pattern.decode():
        out += {"\n": "\\n", '"': '\\"', "\\": "\\\\"}.get(ch, ch)
    return f'"{out}"'


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    text = MODULE.read_text()
    table, body = read_table(text)
    paths = sorted(p for d in args for p in Path(d).glob("*.out"))
    outputs = [(p.name, p.read_bytes()) for p in paths] + [("the perf gate's build log", build_log())]
    distinct, matrix, names, sizes = windows(outputs)
    search = Search(table, distinct, matrix, sizes)
    search.run()
    false = search.false_per_output(search.masks, search.choice)
    for name, f, size in sorted(zip(names, false, sizes), key=lambda r: -r[1] / r[2])[:10]:
        print(f"  {name}: {f * BOUND / size:.2f} false candidates per {BOUND:,} bytes")
    rows = sorted(zip(search.patterns, search.choice), key=lambda r: r[1][1])
    table_text = "\n".join(f"    anchored({rust_literal(p)}, {at}, {b})," for p, (at, b) in rows)
    if "--write" in sys.argv:
        MODULE.write_text(text[: body.start(1)] + table_text + text[body.end(1) :])
        print(f"written to {MODULE}")
    else:
        print(table_text)


if __name__ == "__main__":
    main()
