"""Retrieval metrics on hand-computed cases, golden-file parsing, and the shop golden set."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import pytest

from codecite.chunking import chunk_file
from codecite.chunking.grammars import detect_language
from codecite.config import Config
from codecite.errors import UserError
from codecite.evaluate import GoldenQuery, Relevant, Retrieved, evaluate, load_golden

FIXTURES = Path(__file__).parent / "fixtures"


def gq(*relevant: Relevant, id: str = "q", kind: str = "", persona: str = "") -> GoldenQuery:
    return GoldenQuery(id=id, query=f"query {id}", relevant=relevant, kind=kind, persona=persona)


def hit(path: str, start: int = 1, end: int = 10) -> Retrieved:
    return Retrieved(path, start, end)


# --------------------------------------------------------------------------- metrics


def test_perfect_single_result() -> None:
    report = evaluate([gq(Relevant("a.py", 1, 5))], [[hit("a.py", 1, 5)]])
    for level in (report.file, report.chunk):
        assert level.recall_at_1 == level.recall_at_5 == level.recall_at_10 == 1.0
        assert level.mrr == level.ndcg_at_10 == level.hit_at_5 == 1.0
        assert level.precision_at_5 == pytest.approx(1 / 5)


def test_file_level_versus_chunk_level() -> None:
    # the right file, the wrong function: a file hit but no chunk hit
    golden = [gq(Relevant("a.py", 20, 30))]
    report = evaluate(golden, [[hit("b.py"), hit("a.py", 1, 10), hit("a.py", 31, 40)]])
    row = report.queries[0]
    assert row.file_ranks == (2,)
    assert row.chunk_ranks == (None,)
    assert row.file.mrr == 0.5
    assert row.chunk.mrr == 0.0
    assert row.chunk.recall_at_10 == 0.0
    assert row.top_paths == ("b.py", "a.py")


def test_overlap_counts_as_chunk_hit() -> None:
    golden = [gq(Relevant("a.py", 20, 30))]
    row = evaluate(golden, [[hit("a.py", 30, 45)]]).queries[0]
    assert row.chunk_ranks == (1,)


def test_relevant_without_lines_matches_any_chunk_of_the_file() -> None:
    golden = [gq(Relevant("b.py"), Relevant("a.py", 5, 6))]
    row = evaluate(golden, [[hit("x.py"), hit("b.py", 100, 120)]]).queries[0]
    assert row.chunk_ranks == (2, None)
    assert row.file_ranks == (2, None)
    assert row.chunk.recall_at_5 == 0.5
    assert row.chunk.mrr == 0.5


def test_duplicates_never_count_twice() -> None:
    golden = [gq(Relevant("a.py", 1, 10), Relevant("b.py", 1, 10))]
    results = [[hit("a.py"), hit("a.py"), hit("a.py", 5, 8), hit("c.py"), hit("b.py")]]
    row = evaluate(golden, results).queries[0]
    # file level: distinct paths a, c, b -> relevant at ranks 1 and 3
    assert row.top_paths == ("a.py", "c.py", "b.py")
    assert row.file_ranks == (1, 3)
    assert row.file.precision_at_5 == pytest.approx(2 / 5)
    assert row.file.ndcg_at_10 == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    # chunk level: positions 1 and 5 are the only hits
    assert row.chunk_ranks == (1, 5)
    assert row.chunk.precision_at_5 == pytest.approx(2 / 5)
    assert row.chunk.recall_at_1 == 0.5
    assert row.chunk.recall_at_5 == 1.0


def test_duplicate_relevant_entries_are_one_item() -> None:
    golden = [gq(Relevant("a.py", 1, 5), Relevant("a.py", 1, 5))]
    row = evaluate(golden, [[hit("a.py", 1, 5)]]).queries[0]
    assert row.chunk_ranks == (1,)
    assert row.file_ranks == (1,)
    assert row.chunk.recall_at_1 == 1.0


def test_ndcg_exact_value() -> None:
    # 3 relevant chunks, hits at positions 2 and 4:
    # DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/log2(4)
    golden = [gq(Relevant("a.py", 1, 1), Relevant("b.py", 1, 1), Relevant("c.py", 1, 1))]
    results = [[hit("x.py"), hit("a.py"), hit("y.py"), hit("c.py")]]
    row = evaluate(golden, results).queries[0]
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert row.chunk.ndcg_at_10 == pytest.approx(dcg / idcg)
    assert row.chunk.ndcg_at_10 == pytest.approx(0.4981893)
    assert row.chunk.recall_at_5 == pytest.approx(2 / 3)
    assert row.chunk.mrr == 0.5
    assert row.chunk.hit_at_5 == 1.0


def test_one_chunk_covering_two_relevant_items() -> None:
    # a class chunk overlapping two relevant methods: both found, one hit position
    golden = [gq(Relevant("a.py", 5, 8), Relevant("a.py", 10, 12))]
    row = evaluate(golden, [[hit("a.py", 1, 20)]]).queries[0]
    assert row.chunk_ranks == (1, 1)
    assert row.chunk.recall_at_1 == 1.0
    assert row.chunk.precision_at_5 == pytest.approx(1 / 5)
    assert row.chunk.ndcg_at_10 == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_empty_results() -> None:
    report = evaluate([gq(Relevant("a.py"))], [[]])
    row = report.queries[0]
    assert row.file_ranks == (None,) and row.chunk_ranks == (None,)
    assert row.file.mrr == row.file.ndcg_at_10 == row.chunk.recall_at_10 == 0.0
    assert row.top_paths == ()


def test_k_cuts_the_results() -> None:
    results = [[hit(f"x{i}.py") for i in range(6)] + [hit("a.py")]]
    golden = [gq(Relevant("a.py"))]
    assert evaluate(golden, results, k=10).queries[0].file.mrr == pytest.approx(1 / 7)
    cut = evaluate(golden, results, k=5).queries[0]
    assert cut.file.mrr == 0.0 and cut.file.recall_at_10 == 0.0
    assert cut.top_paths == tuple(f"x{i}.py" for i in range(5))
    # beyond rank 5 counts for recall@10 but not for hit@5
    full = evaluate(golden, results).queries[0]
    assert full.chunk.recall_at_10 == 1.0 and full.chunk.hit_at_5 == 0.0


def test_ndcg_ideal_capped_at_ten_items() -> None:
    golden = [gq(*(Relevant(f"r{i}.py") for i in range(12)))]
    results = [[hit(f"r{i}.py") for i in range(12)]]
    row = evaluate(golden, results, k=20).queries[0]
    assert row.file.ndcg_at_10 == pytest.approx(1.0)
    assert row.file.recall_at_10 == pytest.approx(10 / 12)


def test_paths_are_normalized() -> None:
    row = evaluate([gq(Relevant("./a/b.py"))], [[hit("a\\b.py")]]).queries[0]
    assert row.file_ranks == (1,)


def test_means_breakdowns_worst_and_json() -> None:
    golden = [
        gq(Relevant("a.py"), id="q1", kind="locate", persona="qa"),
        gq(Relevant("a.py"), id="q2", kind="locate", persona="pm"),
        gq(Relevant("a.py"), id="q3", kind="tests"),
    ]
    results = [[hit("a.py")], [hit("b.py"), hit("a.py")], []]
    report = evaluate(golden, results)
    assert report.file.mrr == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.by_kind["locate"].count == 2
    assert report.by_kind["locate"].file.mrr == pytest.approx(0.75)
    assert report.by_kind["tests"].file.mrr == 0.0
    assert set(report.by_persona) == {"qa", "pm"}  # unlabelled queries are left out
    assert [q.id for q in report.worst(2)] == ["q3", "q2"]
    data = report.to_json()
    assert data["k"] == 10 and data["count"] == 3
    assert data["mean"]["file"]["mrr"] == pytest.approx(0.5)
    assert data["by_kind"]["locate"]["count"] == 2
    assert data["queries"][1]["file_ranks"] == [2]
    assert data["queries"][2]["chunk_ranks"] == [None]


def test_evaluate_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError, match="2 golden queries but 1"):
        evaluate([gq(Relevant("a.py")), gq(Relevant("b.py"))], [[]])
    with pytest.raises(ValueError, match="k must be"):
        evaluate([gq(Relevant("a.py"))], [[]], k=0)


# --------------------------------------------------------------------------- load_golden


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_golden_parses_fields_and_skips_comments(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "// a comment\n"
        "\n"
        '{"id": "a", "query": "where", "relevant": [{"path": "x.py", "start_line": 2,'
        ' "end_line": 4}, {"path": "./y.py"}], "persona": "qa", "kind": "tests",'
        ' "facts": ["f1"]}\n'
        '{"query": "second", "relevant": [{"path": "z.py"}]}\n',
    )
    first, second = load_golden(path)
    assert first == GoldenQuery(
        id="a",
        query="where",
        relevant=(Relevant("x.py", 2, 4), Relevant("y.py")),
        persona="qa",
        kind="tests",
        facts=("f1",),
    )
    assert second.id == "line4" and second.relevant == (Relevant("z.py"),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"golden\.jsonl:3: invalid JSON"),
        ('["a list"]', r":3: expected a JSON object"),
        ('{"relevant": [{"path": "a.py"}]}', r':3: missing "query"'),
        ('{"query": "q", "relevant": []}', r':3: "relevant" must be a non-empty list'),
        ('{"query": "q"}', r':3: "relevant" must be a non-empty list'),
        ('{"query": "q", "relevant": [{"start_line": 1}]}', r':3: .*needs a "path"'),
        ('{"query": "q", "relevant": [{"path": "a", "start_line": 1}]}', r":3: give both"),
        (
            '{"query": "q", "relevant": [{"path": "a", "start_line": 5, "end_line": 2}]}',
            r":3: line range 5-2",
        ),
        ('{"query": "q", "relevant": [{"path": "a"}], "facts": "x"}', r':3: "facts" must'),
        ('{"id": "q1", "query": "q", "relevant": [{"path": "a"}]}', r":3: id 'q1' already used"),
    ],
)
def test_load_golden_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    good = '{"id": "q1", "query": "ok", "relevant": [{"path": "a.py"}]}'
    path = write(tmp_path, f"{good}\n\n{line}\n")
    with pytest.raises(UserError, match=message):
        load_golden(path)


def test_load_golden_missing_or_empty_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_golden(tmp_path / "nope.jsonl")
    with pytest.raises(UserError, match="has no queries"):
        load_golden(write(tmp_path, "// only a comment\n\n"))


# --------------------------------------------------------------------------- shop golden set


def overlaps(a: Relevant, b: Relevant) -> bool:
    if a.path != b.path:
        return False
    if a.start_line is None or a.end_line is None or b.start_line is None or b.end_line is None:
        return True  # a file-level label covers every chunk of the file
    return a.start_line <= b.end_line and b.start_line <= a.end_line


def test_overlaps_helper() -> None:
    assert overlaps(Relevant("a", 1, 5), Relevant("a", 5, 9))
    assert not overlaps(Relevant("a", 1, 4), Relevant("a", 5, 9))
    assert overlaps(Relevant("a"), Relevant("a", 5, 9))
    assert not overlaps(Relevant("a"), Relevant("b"))


def test_shop_golden_set_is_consistent_with_the_fixture() -> None:
    shop = FIXTURES / "shop"
    queries = load_golden(FIXTURES / "shop_golden.jsonl")
    assert len(queries) >= 34
    personas = Counter(q.persona for q in queries)
    assert set(personas) == {"engineer", "qa", "pm"}
    assert min(personas.values()) >= len(queries) // 4
    assert {q.kind for q in queries} <= {"locate", "explain", "impact", "tests"}
    definitions: dict[str, set[tuple[int, int]]] = {}
    for query in queries:
        assert 1 <= len(query.relevant) <= 4, query.id
        assert 1 <= len(query.facts) <= 3, query.id
        texts = []
        for rel in query.relevant:
            file = shop / rel.path
            assert file.is_file(), f"{query.id}: {rel.path} does not exist"
            text = file.read_text(encoding="utf-8")
            texts.append(text.lower())
            if rel.start_line is None:
                continue
            assert rel.end_line is not None and rel.end_line <= len(text.splitlines())
            if rel.path not in definitions:
                chunks = chunk_file(
                    text,
                    path=rel.path,
                    language=detect_language(rel.path),
                    repo="shop",
                    config=Config(),
                )
                definitions[rel.path] = {
                    (c.start_line, c.end_line)
                    for c in chunks
                    if c.kind in ("function", "method", "class")
                }
            assert (rel.start_line, rel.end_line) in definitions[rel.path], (
                f"{query.id}: {rel.path}:{rel.start_line}-{rel.end_line} is not a definition chunk"
            )
        # overlapping labels could never all be hits, which would cap nDCG below 1
        for a, b in itertools.combinations(query.relevant, 2):
            assert not overlaps(a, b), f"{query.id}: overlapping labels {a} and {b}"
        for fact in query.facts:
            assert any(fact.lower() in t for t in texts), f"{query.id}: fact {fact!r} not found"
