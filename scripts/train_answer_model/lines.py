"""Step 1c of the answer model's recipe: which line of a definition answers, from commits.

A commit's subject says what changed ("retry stops after the deadline"); the lines it
added are where that now happens. For every commit question of ``commits.py``
(``WORKDIR/<name>/golden-commits.jsonl``), each definition it changed is read as the
released tree holds it, and its lines whose text is a line the commit added (stripped,
at least :data:`MIN_CHARS` characters, not a bracket or a ``pass``) are that question's
right lines. A definition the commit wrote almost whole (more than :data:`MAX_SHARE` of
its lines) says nothing about where in it the answer is and is skipped.

    python scripts/train_answer_model/lines.py --workdir /work/answer-train \\
        --mirrors /work/.mirror

Writes ``WORKDIR/<name>/golden-lines.jsonl`` (id, query, path, start, end, lines); the
features of every line are computed by ``mine.py --set lines``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from commits import git, mirrored, source_tree  # noqa: E402

#: Shorter added lines (``)``, ``else:``) match anywhere and say nothing.
MIN_CHARS = 8
#: A definition more than this share of which the commit added is new, not changed.
MAX_SHARE = 0.5
_TRIVIAL = re.compile(r"^(pass|return|else:|try:|finally:|break|continue|[\])}]+[,:]?)$")


def added(mirror: Path, sha: str, path: str) -> set[str]:
    """The stripped text of the lines ``sha`` added to ``path``."""
    diff = git(mirror, "show", "--format=", "-U0", sha, "--", path)
    out = set()
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            text = line[1:].strip()
            if len(text) >= MIN_CHARS and not _TRIVIAL.match(text):
                out.add(text)
    return out


def right_lines(name: str, folder: Path, mirror: Path) -> int:
    target = folder / "golden-lines.jsonl"
    source = folder / "golden-commits.jsonl"
    if target.is_file() or not source.is_file():
        return -1
    tree = source_tree(folder)
    rows = []
    for g in (json.loads(line) for line in source.read_text().splitlines() if line):
        for ref in g["refs"]:
            wanted = added(mirror, g["commit"], ref["path"])
            text = (tree / ref["path"]).read_text(errors="replace").splitlines()
            span = range(ref["start"], ref["end"] + 1)
            lines = [n for n in span if n <= len(text) and text[n - 1].strip() in wanted]
            if lines and len(lines) <= MAX_SHARE * len(span):
                rows.append({"id": g["id"], "query": g["query"], **ref, "lines": lines})
    with target.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    for name, folder, mirror in mirrored(argv, __doc__.split("\n\n")[0]):
        started = time.perf_counter()
        n = right_lines(name, folder, mirror)
        took = time.perf_counter() - started
        print(f"{name}: {'done before' if n < 0 else f'{n} definitions'}, {took:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
