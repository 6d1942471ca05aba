"""A variant question set of the answer model's recipe: long questions.

People's questions about code are often long: a sentence that describes the code it asks
about, then what it asks of it (SWE-QA's "How does the method that merges configuration
values in the spacing configuration dataclass handle precedence ...?", 25 words at the
median). The recipe's questions are short (docstring first sentences: 9 words at the
median; commit subjects: 6). Here each documented non-test definition's whole first
docstring paragraph, when it runs to at least :data:`MIN_WORDS` words, is a question
whose answer is that definition, asked of the same stripped index as the docstring
questions (``prepare.py`` first):

    python scripts/train_answer_model/paragraphs.py --workdir /work/answer-train
    python scripts/train_answer_model/mine.py --workdir /work/answer-train --set paragraphs
    python scripts/train_answer_model/train.py --workdir /work/answer-train \\
        --sets docstrings,commits,paragraphs

Writes ``WORKDIR/<name>/golden-paragraphs.jsonl`` (id, query, path, start, end).
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(HERE)]

from prepare import MAX_QUESTIONS, SEED, projects  # noqa: E402
from search_corpus import code_files, is_test_path  # noqa: E402
from search_queries import documented  # noqa: E402

#: Words a paragraph needs to be a long question (the docstring questions' 95th
#: percentile is 20 words; SWE-QA's development questions' median is 25).
MIN_WORDS = 20
#: Words kept of a longer paragraph (SWE-QA's questions rarely run past 45).
MAX_WORDS = 60


def paragraph(doc: str) -> str | None:
    """The first paragraph of a doc text on one line, cut at :data:`MAX_WORDS` words;
    None when shorter than :data:`MIN_WORDS` or when it holds a code example."""
    first = inspect.cleandoc(doc).strip().split("\n\n", 1)[0]
    if ">>>" in first or "::" in first:
        return None
    words = first.split()
    if len(words) < MIN_WORDS:
        return None
    return " ".join(words[:MAX_WORDS])


def write(folder: Path, name: str) -> int:
    """``golden-paragraphs.jsonl`` of one prepared project; returns its questions."""
    (source,) = [p for p in (folder / "download" / "src").iterdir() if p.is_dir()]
    found = []
    for rel, language in code_files(source):
        if is_test_path(rel):
            continue
        text = (source / rel).read_text(encoding="utf-8", errors="replace")
        for item in documented(text, language):
            asked = paragraph(item.doc)
            if asked:
                found.append((asked, rel, item.start_line, item.end_line))
    counts: dict[str, int] = {}
    for asked, *_ in found:
        counts[asked.lower()] = counts.get(asked.lower(), 0) + 1
    unique = [f for f in found if counts[f[0].lower()] == 1]
    rng = random.Random(f"{SEED}-paragraphs-{name}")
    picked = rng.sample(unique, min(MAX_QUESTIONS, len(unique)))
    with (folder / "golden-paragraphs.jsonl").open("w") as fh:
        for i, (asked, rel, start, end) in enumerate(picked, start=1):
            row = {"id": f"{name}-par-{i:03d}", "query": asked, "path": rel, "start": start,
                   "end": end}  # fmt: skip
            fh.write(json.dumps(row) + "\n")
    return len(picked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/work/answer-train", help="prepared projects")
    parser.add_argument("--projects", default="projects.txt", help="the list (beside this)")
    args = parser.parse_args(argv)
    for spec in projects(HERE / args.projects):
        name = spec.split("==")[0]
        folder = Path(args.workdir) / name
        if not (folder / ".complete").is_file():
            print(f"{spec}: not prepared (prepare.py first)", flush=True)
            continue
        print(f"{spec}: {write(folder, name)} paragraph questions", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
