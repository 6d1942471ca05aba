"""``eval --mine``: a golden set mined from a real git history built here, commit by
commit, then indexed and evaluated end to end."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import codecite
from codecite.errors import UserError
from codecite.evaluate import Retrieved, evaluate, load_golden
from codecite.evaluate.mine import MinedSet, clean_subject, mine_golden, run_mine, write_golden

PRICING = '''"""Prices."""


def price(item):
    return item.base


def discount(order):
    """Discount for an order."""
    return 0


def tax(amount):
    return amount * 0.2


def shipping(order):
    return 5


def handling(order):
    return 1


def fee(order):
    return 2
'''

CART = '''"""Carts."""


class Cart:
    def __init__(self):
        self.items = []

    def add(self, price):
        self.items.append(price)

    def total(self):
        return sum(self.items)
'''

LEGACY = """

def legacy_coupon(order):
    return 1
"""


def _tables() -> str:
    return "".join(f"def table_{i}(x):\n    return x * {i}\n\n\n" for i in range(120))


class History:
    """A git repository whose commits get increasing, fixed dates (stable log order)."""

    def __init__(self, root: Path) -> None:
        self.root, self.tick = root, 0
        root.mkdir()
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        self.tick += 1
        date = f"2024-01-01T00:{self.tick // 60:02d}:{self.tick % 60:02d}+00:00"
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def edit(self, rel: str, old: str, new: str) -> None:
        text = (self.root / rel).read_text()
        assert text.count(old) == 1, f"{old!r} not once in {rel}"
        self.write(rel, text.replace(old, new))

    def commit(self, subject: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", subject)
        return self.git("rev-parse", "--short", "HEAD")


def _build(root: Path) -> tuple[History, dict[str, str]]:
    """The scripted history; returns name → short hash of the commits that matter."""
    h, ids = History(root), {}
    h.write("shop/__init__.py", '__version__ = "1.0.0"\n')
    h.write("shop/pricing.py", PRICING)
    h.write("shop/cart.py", CART)
    h.write("README.md", "# Shop\n")
    h.write("tests/test_pricing.py", "def test_price():\n    assert True\n")
    h.commit("initial")
    h.edit(
        "shop/pricing.py",
        "    return 0\n\n\ndef tax",
        "    if order.n > 3:\n        return order.total * 0.1\n    return 0\n\n\ndef tax",
    )
    h.edit("tests/test_pricing.py", "assert True", "assert True\n\n\ndef test_loyal():\n    pass")
    ids["loyalty"] = h.commit("Add loyalty discount for returning customers (#12)")
    h.edit("shop/cart.py", "return sum(self.items)", "return round(sum(self.items), 2)")
    ids["round"] = h.commit("fix(cart): round the cart total to cents")
    h.edit("shop/__init__.py", "1.0.0", "1.1.0")
    ids["bump"] = h.commit("Bump version to 1.1.0")
    h.edit("shop/pricing.py", '"""Discount for an order."""', '"""Discount of an order."""')
    ids["typo"] = h.commit("Fix typo in discount docstring")
    h.edit("shop/pricing.py", "return amount * 0.2", "return amount*0.2")
    ids["tidy"] = h.commit("Tidy the pricing module")
    h.git("checkout", "-q", "-b", "feature")
    h.edit(
        "shop/pricing.py",
        "def tax(amount):\n    return amount*0.2",
        'def tax(amount, region="EU"):\n    return amount * RATES.get(region, 0.2)',
    )
    ids["region"] = h.commit("Apply tax per region in checkout")
    h.git("checkout", "-q", "main")
    h.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")
    h.write("shop/pricing.py", (h.root / "shop/pricing.py").read_text() + LEGACY)
    ids["legacy"] = h.commit("Add a legacy coupon helper for old orders")
    h.write("shop/pricing.py", (h.root / "shop/pricing.py").read_text().replace(LEGACY, ""))
    ids["removal"] = h.commit("Remove the legacy coupon helper entirely")
    h.git("revert", "--no-edit", ids["typo"])
    h.write("shop/tables.py", _tables())
    ids["huge"] = h.commit("Generate the price tables for every region")
    h.write("README.md", "# Shop\n\nPrices include tax.\n")
    h.commit("Document the pricing rules in the README")
    h.write("tests/test_cart.py", "def test_empty():\n    pass\n")
    h.commit("Cover the empty cart in tests")
    h.edit("shop/pricing.py", '"""Prices."""', '"""Prices, discounts and taxes."""')
    h.commit("docs: explain discounts in the module docstring")
    h.edit("shop/pricing.py", "return order.total * 0.1", "return order.total * rate")
    h.edit("shop/pricing.py", "def discount(order):", "def discount(order, rate=0.1):")
    h.edit("shop/cart.py", "def total(self):", "def total(self, digits=2):")
    h.edit("shop/cart.py", "round(sum(self.items), 2)", "round(sum(self.items), digits)")
    h.edit("tests/test_pricing.py", "pass", "assert discount")
    ids["configurable"] = h.commit("feat: make discount and total configurable")
    h.edit("shop/pricing.py", "return 2\n", "return 2.5\n")
    h.commit("Tweak it")
    for name in (
        "price(item",
        "discount(order",
        "tax(amount",
        "shipping(order",
        "handling(order",
        "fee(order",
    ):
        h.edit("shop/pricing.py", f"def {name}", f"def {name}: object")
    h.commit("Add type hints to every pricing function")
    h.edit("shop/cart.py", "class Cart:\n", 'class Cart:\n    currency = "EUR"\n\n')
    ids["currency"] = h.commit("Track the currency on every cart")
    h.edit("shop/cart.py", "round(sum(self.items), digits)", "round(sum(self.items) + 0, digits)")
    ids["round_again"] = h.commit("Round the cart total to cents (#40)")
    return h, ids


@pytest.fixture(scope="module")
def shop_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    history, ids = _build(tmp_path_factory.mktemp("mine") / "shop")
    with codecite.open_index(history.root) as idx:
        idx.update(embed=False)
    yield history.root, ids


@pytest.fixture
def mined(shop_history: tuple[Path, dict[str, str]]) -> MinedSet:
    with codecite.open_index(shop_history[0], create=False) as idx:
        return mine_golden(idx, n=50)


def _expected(mined: MinedSet) -> list[tuple[str, str, list[tuple[str, str]]]]:
    return [(q.id, q.query, [(d.path, d.qualname) for d in q.definitions]) for q in mined.queries]


def test_exactly_the_meaningful_commits_become_questions(
    mined: MinedSet, shop_history: tuple[Path, dict[str, str]]
) -> None:
    ids = shop_history[1]
    assert _expected(mined) == [
        (ids["round_again"], "Round the cart total to cents", [("shop/cart.py", "Cart.total")]),
        (ids["currency"], "Track the currency on every cart", [("shop/cart.py", "Cart")]),
        (
            ids["configurable"],
            "make discount and total configurable",
            [("shop/cart.py", "Cart.total"), ("shop/pricing.py", "discount")],
        ),
        (ids["region"], "Apply tax per region in checkout", [("shop/pricing.py", "tax")]),
        (
            ids["loyalty"],
            "Add loyalty discount for returning customers",
            [("shop/pricing.py", "discount")],
        ),
    ]
    assert all(q.subject and len(q.commit) == 40 for q in mined.queries)


def test_every_other_commit_is_skipped_for_its_reason(mined: MinedSet) -> None:
    assert mined.stats.skipped == {
        "vague-subject": 2,  # "initial", "Tweak it"
        "duplicate": 1,  # "round the cart total to cents", newer one kept
        "too-many-definitions": 1,
        "chore": 1,
        "no-source": 2,  # README only, tests only
        "huge": 1,
        "revert": 1,
        "no-definition": 1,  # a whole function deleted
        "gone-at-head": 1,  # the legacy helper, deleted later
        "merge": 1,
        "formatting": 1,  # whitespace-only diff under a neutral subject
        "typo": 1,
        "release": 1,
    }
    assert mined.stats.kept == 5
    assert mined.stats.scanned == 5 + sum(mined.stats.skipped.values()) == 20
    assert mined.summary().startswith("mined 5 questions from 20 commits (skipped: 2 vague")


def test_line_ranges_come_from_the_index_at_head(mined: MinedSet) -> None:
    by_name = {d.qualname: d for q in mined.queries for d in q.definitions}
    # Cart.total at HEAD: 'def total(self, digits=2):' and its one-line body
    assert (by_name["Cart.total"].start_line, by_name["Cart.total"].end_line) == (13, 14)
    # a class answers with its header only, up to its first method
    assert (by_name["Cart"].start_line, by_name["Cart"].end_line) == (4, 6)
    assert (by_name["discount"].start_line, by_name["discount"].end_line) == (8, 12)


def test_n_stops_at_the_newest_questions(shop_history: tuple[Path, dict[str, str]]) -> None:
    with codecite.open_index(shop_history[0], create=False) as idx:
        mined = mine_golden(idx, n=2)
    assert [q.id for q in mined.queries] == [
        shop_history[1]["round_again"],
        shop_history[1]["currency"],
    ]
    assert mined.stats.scanned == 2


def test_written_set_is_a_golden_file(mined: MinedSet, tmp_path: Path) -> None:
    out = tmp_path / "mined.jsonl"
    write_golden(mined, out)
    golden = load_golden(out)
    assert golden == mined.golden()
    assert {q.kind for q in golden} == {"mined"}
    assert [q.id for q in golden] == [q.id for q in mined.queries]


def test_mined_set_is_evaluated_end_to_end(
    shop_history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    out = tmp_path / "golden.jsonl"
    with codecite.open_index(shop_history[0], create=False) as idx:
        run = run_mine(idx, n=50, out=out, k=10)
        golden = load_golden(out)
        results = [
            [
                Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line)
                for h in idx.searcher.search(q.query, k=10, vector=False).hits
            ]
            for q in golden
        ]
    keyword = evaluate(golden, results, k=10)
    for report in (run.report, keyword):
        assert report.overall.count == len(golden) == run.mined.stats.kept == 5
        assert set(report.by_kind) == {"mined"}
        for level in (report.file, report.chunk):
            assert all(0.0 <= v <= 1.0 for v in level.to_json().values())
        assert report.file.recall_at_10 > 0  # the shop's own words find its code
    assert run.to_json()["mined"]["kept"] == 5
    assert [row.id for row in run.report.queries] == [q.id for q in golden]


def test_index_of_a_subfolder_mines_its_own_paths(
    shop_history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    with codecite.open_index(shop_history[0] / "shop", index_dir=tmp_path / "idx") as idx:
        idx.update(embed=False)
        mined = mine_golden(idx, n=50)
    paths = {d.path for q in mined.queries for d in q.definitions}
    assert paths == {"cart.py", "pricing.py"}
    assert mined.stats.kept == 5


def test_a_folder_without_history_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    with codecite.open_index(tmp_path, index_dir=tmp_path.parent / "idx-nogit") as idx:
        idx.update(embed=False)
        with pytest.raises(UserError, match="not a git repository"):
            mine_golden(idx)


@pytest.mark.parametrize(
    ("subject", "query"),
    [
        ("fix(parser): handle empty options (#1234)", "handle empty options"),
        (
            "Fix #6628 - JSONDecodeError are not deserializable",
            "Fix JSONDecodeError are not deserializable",
        ),
        ("gh-1234: Speed up the tokenizer.", "Speed up the tokenizer"),
        ("ABC-12: Retry failed uploads [skip ci]", "Retry failed uploads"),
        ("Close the pager file, fixes #12", "Close the pager file"),
        ("sessions: fix hooks type", "sessions: fix hooks type"),
    ],
)
def test_subjects_are_cleaned_into_questions(subject: str, query: str) -> None:
    assert clean_subject(subject) == query


@pytest.mark.slow
def test_eval_mine_on_the_command_line(
    shop_history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    from repos import run_cli

    out = tmp_path / "mined.jsonl"
    root = str(shop_history[0])
    proc = run_cli("eval", "--mine", root, "-n", "50", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["count"] == data["mined"]["kept"] == 5 and out.is_file()
    again = run_cli("eval", str(out), root, "--json")
    assert json.loads(again.stdout)["mean"] == data["mean"]  # the same set, the same numbers
    human = run_cli("eval", "--mine", root)
    assert human.returncode == 0 and "mined 5 questions" in human.stdout
    assert run_cli("eval", "--mine", root, str(out)).returncode == 1
    assert run_cli("eval").returncode == 1
