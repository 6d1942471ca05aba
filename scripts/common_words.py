"""Write ``src/codecite/question/data/common-words.txt``: the words of Python's standard
library (identifier parts and the words of its docstrings and comments, tests left out)
that occur at least :data:`MIN_COUNT` times and that the bundled tokenizer's vocabulary
lacks as whole words.

The answer model (``codecite.answer.features``) counts a question naming something no
indexed code holds. A word is a *name* when it is written capitalised inside a sentence
(``Celery``, ``PowerShell``) or is neither in the tokenizer's vocabulary (everyday
English) nor in this list (the jargon of code: ``login``, ``endpoint``, ``username``,
``multipart``) — so ``keychain``, ``firebase`` and ``sqlalchemy`` are names. The list
ships with codecite so every machine reads questions the same way::

    python scripts/common_words.py [STDLIB_DIR]
"""

from __future__ import annotations

import json
import re
import sys
import sysconfig
from collections import Counter
from importlib import resources
from pathlib import Path

MIN_COUNT = 3
TARGET = Path(__file__).resolve().parents[1] / "src" / "codecite" / "question" / "data"


def stdlib_words(stdlib: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in sorted(stdlib.rglob("*.py")):
        if "site-packages" in path.parts or any(p.startswith("test") for p in path.parts):
            continue
        for word in re.findall(r"[A-Za-z]+", path.read_text(encoding="utf-8", errors="replace")):
            for part in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", word):
                counts[part.lower()] += 1
    return counts


def main() -> int:
    stdlib = Path(sys.argv[1] if len(sys.argv) > 1 else sysconfig.get_paths()["stdlib"])
    tokenizer = resources.files("codecite.embed").joinpath("data/minilm-tokenizer.json")
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    counts = stdlib_words(stdlib)
    words = sorted(w for w, n in counts.items() if n >= MIN_COUNT and len(w) > 2 and w not in vocab)
    TARGET.mkdir(parents=True, exist_ok=True)
    out = TARGET / "common-words.txt"
    version = sys.version.split()[0]
    header = f"# {len(words)} words of Python {version}'s stdlib (scripts/common_words.py)\n"
    out.write_text(header + "\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {len(words)} words to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
