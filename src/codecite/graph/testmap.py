"""Which files and functions are tests, and which file a test file is about.

Conventions: ``test_*.py``, ``*_test.py``, files under ``tests/``/``test/``/``__tests__/``/
``spec/``, ``*_test.go``, ``*.test.ts``/``*.spec.js``, ``*Test.java``, ``*Tests.cs``,
``*_spec.rb``, ``*Test.php``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from codecite.types import Definition

_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs", "testing"})
#: Base-name patterns of test files; group ``s`` is the subject's stem.
_TEST_NAME = re.compile(
    r"^(?:test_(?P<s1>.+)\.py|(?P<s2>.+)_test\.(?:py|go|rb|rs|c|cc|cpp)"
    r"|(?P<s3>.+)\.(?:test|spec)\.(?:[cm]?[jt]sx?)|(?P<s4>.+?)Tests?\.(?:java|cs|php|kt)"
    r"|(?P<s5>.+)_spec\.rb|Test(?P<s6>.+)\.(?:java|cs|php)|tests?\.py|conftest\.py)$"
)
_TEST_FUNC = re.compile(r"^(?:test|Test|Benchmark|Fuzz|Example|should|it_|spec)")
_FIXTURE_NAMES = frozenset(
    {
        "setup",
        "setUp",
        "SetUp",
        "tearDown",
        "TearDown",
        "teardown",
        "setUpClass",
        "tearDownClass",
        "beforeEach",
        "afterEach",
        "beforeAll",
        "afterAll",
        "before",
        "after",
        "init",
        "__init__",
        "constructor",
        "Dispose",
        "main",
    }
)
#: Families where test functions need not be named like tests (annotations, blocks).
_LOOSE_FAMILIES = frozenset({"java", "c_sharp", "php", "ruby", "js", "rust", "c"})

FAMILY: dict[str, str] = {
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "c": "c",
    "cpp": "c",
}


def family(language: str) -> str:
    """Language family: JS/TS together, C/C++ together, else the language itself."""
    return FAMILY.get(language, language)


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """True for files that hold tests, by directory or file name convention."""
    parts = path.split("/")
    if any(p in _TEST_DIRS for p in parts[:-1]):
        return True
    return _TEST_NAME.match(parts[-1]) is not None


def subject_stem(path: str) -> str:
    """``tests/test_orders.py`` → ``orders``; ``OrderServiceTest.java`` → ``OrderService``."""
    m = _TEST_NAME.match(path.rpartition("/")[2])
    if m is None:
        return ""
    return next((v for v in m.groupdict().values() if v), "")


def is_test_source(d: Definition) -> bool:
    """A chunk whose calls are test edges: a test function/method in a test file, or the
    module chunk of a test file (JS ``it(...)`` / RSpec blocks live there)."""
    if not is_test_path(d.path):
        return False
    if d.kind == "module":
        return True
    if d.kind not in ("function", "method"):
        return False
    if _TEST_FUNC.match(d.name):
        return True
    return family(d.language) in _LOOSE_FAMILIES and d.name not in _FIXTURE_NAMES


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def subject_names(test_name: str) -> list[str]:
    """Normalized candidate names a test is about, longest first.

    ``test_cancel_before_capture`` → ``cancelbeforecapture``, ``cancelbefore``, ``cancel``;
    ``TestOrder_Cancel`` → ``ordercancel``, ``order``, plus ``cancel`` (after ``_``).
    """
    body = re.sub(r"^(?:test|Test|Benchmark|Fuzz)_?", "", test_name)
    words = [w.lower() for w in _WORD.findall(body)]
    out = ["".join(words[:n]) for n in range(len(words), 0, -1)]
    if "_" in body and body[:1].isupper():
        out.append(body.rpartition("_")[2].lower())
    return [n for n in out if n]


def normalize(name: str) -> str:
    return name.replace("_", "").lower()


def subject_file(
    test_path: str, stem: str, paths: Sequence[str], language: Callable[[str], str]
) -> str:
    """The file a test file is about: same stem, same language family, not a test file,
    closest directory; "" when none or a tie."""
    fam = family(language(test_path))
    cands = [
        p
        for p in paths
        if p.rpartition("/")[2].partition(".")[0] == stem
        and p != test_path
        and not is_test_path(p)
        and family(language(p)) == fam
    ]
    if len(cands) <= 1:
        return cands[0] if cands else ""
    here = test_path.split("/")[:-1]
    score = {p: _shared(p.split("/")[:-1], here) for p in cands}
    best = max(score.values())
    top = [p for p in cands if score[p] == best]
    return top[0] if len(top) == 1 else ""


def _shared(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def convention_pairs(
    test_files: Mapping[str, Sequence[Definition]],
    in_file: Mapping[str, Sequence[Definition]],
    language: Callable[[str], str],
) -> list[tuple[Definition, Definition]]:
    """(test, subject) pairs by naming: ``test_cancel_before_capture`` in ``test_orders.py``
    → ``cancel`` in ``orders.py``; a qualname match (``TestOrder_Cancel`` → ``Order.Cancel``)
    beats a top-level function, which beats a method of the same name."""
    out: list[tuple[Definition, Definition]] = []
    paths = list(in_file)
    for path, tests in test_files.items():
        stem = subject_stem(path) if is_test_path(path) else ""
        subject = subject_file(path, stem, paths, language) if stem else ""
        if not subject:
            continue
        table: dict[str, list[tuple[int, Definition]]] = {}
        for d in in_file.get(subject, ()):
            if d.kind in ("function", "method"):
                rank = 1 if d.kind == "function" else 2
                table.setdefault(normalize(d.name), []).append((rank, d))
                if "." in d.qualname:
                    table.setdefault(normalize(d.qualname.replace(".", "")), []).append((0, d))
        for t in tests:
            if t.kind not in ("function", "method"):
                continue
            hits = next((table[n] for n in subject_names(t.name) if n in table), [])
            best = min((rank for rank, _ in hits), default=0)
            out.extend((t, d) for rank, d in hits if rank == best)
    return out
