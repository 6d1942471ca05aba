"""Step 1 of the answer model's recipe: the training projects' trees and indexes.

For every distribution of ``projects.txt`` (PyPI, pinned; none of an evaluation set, as
``scripts/train_code_model/exclusions.py`` checks): its sdist is downloaded, its code
files copied with *every* docstring and doc comment removed (line numbers kept:
``bench/search_queries.strip_docs``), and each removed first sentence that names one
non-test definition becomes a question whose answer is that definition's lines
(``bench/search_corpus.build_corpus``). The stripped copy is indexed as a user's would
be (``codecite.open_index(...).update()``: keyword, graph, static and MiniLM vectors),
so the questions are asked of an index that cannot read the answer off a docstring.

    python scripts/train_answer_model/prepare.py --workdir /work/answer-train

Writes ``WORKDIR/<name>/golden.jsonl`` (id, query, path, start, end) and
``WORKDIR/<name>/index``; a project already prepared is skipped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "scripts" / "train_code_model")]

from exclusions import excluded_name  # noqa: E402
from search_corpus import _candidates, build_corpus, code_files, fetch_sdist  # noqa: E402
from search_corpus import is_test_path as corpus_test_path  # noqa: E402

import codecite  # noqa: E402

#: Questions kept per project (sampled with a fixed seed): every project weighs alike.
MAX_QUESTIONS = 150
#: Questions about tests kept per project: a documented test's first sentence ("Test
#: that a closed session refuses a request"), answered by that test.
MAX_TEST_QUESTIONS = 30
SEED = 20261206


def projects(path: Path = HERE / "projects.txt") -> list[str]:
    """The pinned training distributions (``name==version`` first on a line, then its
    repository for ``commits.py``; ``#`` comments)."""
    specs = [ln.split("#")[0].split() for ln in path.read_text().splitlines()]
    specs = [s[0] for s in specs if s]
    bad = [s for s in specs if excluded_name(s.split("==")[0])]
    if bad:
        raise SystemExit(f"excluded from training (an evaluation project): {bad}")
    return specs


def prepare(spec: str, workdir: Path) -> None:
    name = spec.split("==")[0]
    out = workdir / name
    if (out / ".complete").is_file():
        return
    started = time.perf_counter()
    source = fetch_sdist(spec, out / "download")
    corpus = build_corpus(spec, source, out / "tree")
    golden = corpus.golden
    if len(golden) > MAX_QUESTIONS:
        golden = random.Random(f"{SEED}-{name}").sample(golden, MAX_QUESTIONS)
    with (out / "golden.jsonl").open("w") as fh:
        for g in golden:
            (rel,) = g.relevant
            fh.write(json.dumps({"id": g.id, "query": g.query, "path": rel.path,
                                 "start": rel.start_line, "end": rel.end_line}) + "\n")  # fmt: skip
    with codecite.open_index(out / "tree", index_dir=out / "index") as idx:
        idx.update()
        chunks = idx.status().chunks
    done = {"spec": spec, "questions": len(golden), "files": corpus.files, "chunks": chunks}
    (out / ".complete").write_text(json.dumps(done))
    print(f"{spec}: {corpus.files} files, {chunks} chunks, {len(golden)} questions, "
          f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip


def test_questions(out: Path, name: str) -> None:
    """``golden-tests.jsonl``: questions from the docstrings of a project's tests (the
    test files are in the stripped tree too, their docstrings removed)."""
    target = out / "golden-tests.jsonl"
    if target.is_file():
        return
    (source,) = [p for p in (out / "download" / "src").iterdir() if p.is_dir()]
    found = []
    for rel, language in code_files(source):
        if corpus_test_path(rel):
            text = (source / rel).read_text(encoding="utf-8", errors="replace")
            found += _candidates(text, language, rel)
    counts: dict[str, int] = {}
    for sentence, _ in found:
        counts[sentence.lower()] = counts.get(sentence.lower(), 0) + 1
    unique = [(s, r) for s, r in found if counts[s.lower()] == 1]
    rng = random.Random(f"{SEED}-tests-{name}")
    picked = rng.sample(unique, min(MAX_TEST_QUESTIONS, len(unique)))
    with target.open("w") as fh:
        for i, (sentence, r) in enumerate(picked, start=1):
            fh.write(json.dumps({"id": f"{name}-test-{i:03d}", "query": sentence,
                                 "path": r.path, "start": r.start_line,
                                 "end": r.end_line}) + "\n")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/work/answer-train", help="trees and indexes")
    parser.add_argument(
        "--projects", default="projects.txt", help="the list of pinned distributions (beside this)"
    )
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for spec in projects(HERE / args.projects):
        try:
            prepare(spec, workdir)
            test_questions(workdir / spec.split("==")[0], spec.split("==")[0])
        except Exception as exc:  # one project's failure is reported, the rest go on
            print(f"{spec}: FAILED {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
