"""The Python anchors of the signal gate: llmslim and tooltrim, the two libraries that cut tool
outputs as toolsmith does, run as they ship (pinned in interop/requirements-anchors.txt,
installed by interop/setup.sh into interop/.venv-anchors) on every output of the corpus, at each
budget of the gate in chars.

Both count a budget in tokens (about four chars each without tiktoken, as installed here). At
each budget the answer compared is the one of the largest budget in tokens whose answer is at
most that many chars: the anchors get the same chars as every path of ours.

    interop/.venv-anchors/bin/python scripts/anchors.py tests/corpus > answers.json

writes {library: {budget: {output: text}}}, which the gate's binary reads (--anchors).
"""

import json
import logging
import sys
from pathlib import Path

BUDGETS = (1_000, 2_000, 4_000, 10_000)


def largest_within(cut, text, chars):
    """The answer of the largest budget in tokens whose answer has at most `chars` chars."""
    tokens = max(1, chars // 4)
    for _ in range(32):
        answer = cut(text, tokens)
        if len(answer) <= chars:
            return answer
        tokens = max(1, min(tokens - 1, tokens * chars // len(answer)))
    return answer[:0]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: anchors.py CORPUS_DIR (writes the answers as JSON to standard output)")
    # Both warn once that tiktoken is not installed, on standard error: not the gate's business.
    logging.disable(logging.WARNING)
    from llmslim._fit import fit_text
    from tooltrim import ToolCompressor

    compressor = ToolCompressor(store=None)
    libraries = {
        "llmslim": lambda text, tokens: fit_text(text, tokens),
        "tooltrim": lambda text, tokens: compressor.compress(text, max_tokens=tokens).text,
    }
    # Both parts of the corpus: the held-out one's outputs named `held-out/NAME`.
    root = Path(sys.argv[1])
    corpus = sorted(root.glob("*.out")) + sorted(root.glob("held-out/*.out"))
    if not corpus:
        sys.exit(f"anchors.py: no output (*.out) in {sys.argv[1]}")

    def output_name(path):
        return str(path.relative_to(root).with_suffix(""))
    answers = {}
    for name, cut in libraries.items():
        answers[name] = {}
        for budget in BUDGETS:
            answers[name][str(budget)] = {
                output_name(path): largest_within(cut, path.read_bytes().decode("utf-8", errors="replace"), budget)
                for path in corpus
            }
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
