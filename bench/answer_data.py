"""The answer benchmark's questions (``bench/answers/``, see its README): loading and
checking them against the project trees::

    python bench/answer_data.py check starlette /path/to/starlette-0.41.3
    python bench/answer_data.py stats

``check`` verifies every reference of a project against its tree: the file exists, the
range lies inside it, and the lines hold the reference's ``has`` text.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "answers"
#: SWE-QA's development split (``../shared/bench-data/sweqa-dev``): engineers' questions
#: on sqlfluff, reflex and streamlink with the lines (or files) that answer them.
SWEQA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "sweqa-dev"
#: A reference to a whole file (SWE-QA names files without ranges for some questions).
WHOLE_FILE = 10**9
PERSONAS = ("engineer", "qa", "pm")
SHAPES = ("yesno", "quantity", "where", "how", "what-happens", "impact", "tests", "error", "who")
OUT_KINDS = ("other-project", "product")


@dataclass(frozen=True)
class Ref:
    path: str
    start: int
    end: int
    has: str = ""

    def overlaps(self, path: str, start: int, end: int) -> bool:
        return path == self.path and start <= self.end and self.start <= end


@dataclass(frozen=True)
class Question:
    id: str
    project: str
    persona: str
    shape: str
    question: str
    answerable: bool
    refs: tuple[Ref, ...] = ()
    kind: str = ""
    answer: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


def projects(sweqa: bool = False) -> dict[str, dict[str, str]]:
    """Project name → its pin (``{"source": "pypi", "spec": ...}`` or git); with
    ``sweqa`` the SWE-QA development split's projects too (when its file is there)."""
    loaded: dict[str, dict[str, str]] = json.loads((DATA / "projects.json").read_text())
    if sweqa:
        loaded.update(sweqa_projects())
    return loaded


def sweqa_projects() -> dict[str, dict[str, str]]:
    """The SWE-QA development split's projects, pinned as its questions say."""
    pins: dict[str, dict[str, str]] = {}
    for raw in _sweqa_rows():
        name = raw["repo"].split("/")[-1]
        pins[name] = {"source": "git", "repo": raw["repo"], "commit": raw["commit"],
                      "language": "python", "set": "sweqa-dev"}  # fmt: skip
    return pins


def _sweqa_rows() -> list[dict[str, Any]]:
    path = SWEQA / "questions.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _sweqa_questions(project: str) -> list[Question]:
    """SWE-QA's questions of one project: engineers', all answerable; a target file
    without ranges is a reference to the whole file."""
    out = []
    for raw in _sweqa_rows():
        if raw["repo"].split("/")[-1] != project:
            continue
        refs = tuple(
            Ref(t["path"], start, end)
            for t in raw["targets"]
            for start, end in (t["ranges"] or [(1, WHOLE_FILE)])
        )
        out.append(Question(raw["id"], project, "engineer", "how", raw["question"], True, refs))
    return out


def load(project: str) -> list[Question]:
    """A project's questions, each checked for its fields' form (ValueError names the line)."""
    if project in sweqa_projects():
        return _sweqa_questions(project)
    path = DATA / f"{project}.jsonl"
    out: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
        q = _question(raw, project, where)
        if q.id in seen:
            raise ValueError(f"{where}: id {q.id!r} repeats")
        seen.add(q.id)
        out.append(q)
    return out


def _question(raw: dict[str, object], project: str, where: str) -> Question:
    def need(key: str, choices: tuple[str, ...] | None = None) -> str:
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: {key!r} missing or empty")
        if choices and value not in choices:
            raise ValueError(f"{where}: {key}={value!r}; choose from {', '.join(choices)}")
        return value

    answerable = raw.get("answerable")
    if not isinstance(answerable, bool):
        raise ValueError(f"{where}: 'answerable' must be true or false")
    refs = []
    for r in raw.get("refs") or []:  # type: ignore[attr-defined]
        if not isinstance(r, dict) or not isinstance(r.get("path"), str):
            raise ValueError(f"{where}: a ref needs path, start, end")
        start, end = int(r["start"]), int(r.get("end", r["start"]))
        if not 1 <= start <= end:
            raise ValueError(f"{where}: ref {r['path']} has start {start} > end {end}")
        refs.append(Ref(r["path"], start, end, str(r.get("has", ""))))
    if answerable and not refs:
        raise ValueError(f"{where}: an answerable question needs refs")
    if not answerable and refs:
        raise ValueError(f"{where}: an out-of-scope question has no refs")
    kind = str(raw.get("kind", ""))
    if not answerable and kind not in OUT_KINDS:
        raise ValueError(f"{where}: out-of-scope 'kind' must be one of {', '.join(OUT_KINDS)}")
    known = {"id", "persona", "shape", "question", "answerable", "refs", "kind", "answer"}
    return Question(
        need("id"),
        project,
        need("persona", PERSONAS),
        need("shape", SHAPES),
        need("question"),
        answerable,
        tuple(refs),
        kind,
        str(raw.get("answer", "")),
        {k: v for k, v in raw.items() if k not in known},
    )


def check(project: str, tree: Path) -> list[str]:
    """Problems of a project's references against its tree (empty: all good)."""
    problems = []
    for q in load(project):
        for ref in q.refs:
            file = tree / ref.path
            if not file.is_file():
                problems.append(f"{q.id}: {ref.path} is not in the tree")
                continue
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            if ref.end > len(lines) and ref.end != WHOLE_FILE:
                problems.append(f"{q.id}: {ref.path}:{ref.start}-{ref.end} past its {len(lines)}")
                continue
            text = "\n".join(lines[ref.start - 1 : ref.end])
            if ref.has and ref.has not in text:
                problems.append(
                    f"{q.id}: {ref.path}:{ref.start}-{ref.end} does not hold {ref.has!r}"
                )
    return problems


def stats() -> str:
    rows = []
    total: Counter[str] = Counter()
    for project in projects():
        qs = load(project)
        c = Counter(q.persona if q.answerable else "out" for q in qs)
        total.update(c)
        rows.append(f"{project:12} " + " ".join(f"{k}={c[k]}" for k in (*PERSONAS, "out")))
    rows.append(f"{'total':12} " + " ".join(f"{k}={total[k]}" for k in (*PERSONAS, "out")))
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"] and len(argv) == 3:
        problems = check(argv[1], Path(argv[2]))
        print("\n".join(problems) or f"{argv[1]}: every reference holds its text")
        return 1 if problems else 0
    if argv[:1] == ["stats"]:
        print(stats())
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
