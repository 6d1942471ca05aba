"""A class outline whose best line lies in one of its methods is shown as that method:
the block and the first line name ``Invoice.refund`` with its code, not ``Invoice``
with a docstring whose method the reader cannot see (issue 38; requests' "how is the
encoding guessed" led with ``Response`` and a lone ``@property``)."""

from __future__ import annotations

from pathlib import Path

import codecite
from codecite.answer.compose import compose, lead_quote, statement, whole_statements
from codecite.answer.facts import GraphFacts
from codecite.question import read
from codecite.retrieve.types import Hit

BILLING = '''"""Invoices of the shop."""


class Invoice:
    """One invoice: its lines, what was paid and what was given back."""

    def __init__(self, lines: list[float]) -> None:
        """An invoice of ``lines`` (their prices)."""
        self.lines = lines
        self.refunded = 0.0

    def total(self) -> float:
        """What the customer owes for every line."""
        return sum(self.lines)

    def refund(self, amount: float) -> float:
        """Give money back to the customer, never more than the invoice's total.

        The refund is capped: asking for more than is left returns what is left.
        """
        left = self.total() - self.refunded
        given = min(amount, left)
        self.refunded += given
        return given
'''


def test_an_outline_line_in_a_method_is_shown_as_the_method(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "billing.py").write_text(BILLING)
    lines = BILLING.split("\n")
    capped = (
        lines.index(
            "        The refund is capped: asking for more than is left returns what is left."
        )
        + 1
    )
    with codecite.open_index(root) as index:
        index.update()
        store = index.store
        chunks = list(store.chunks("billing.py"))
        outline = next(c for c in chunks if c.kind == "class" and c.qualname == "Invoice")
        facts = GraphFacts(store, None)
        member = facts.member_at(outline, capped)
        assert member is not None and member.qualname == "Invoice.refund"
        assert facts.member_at(outline, outline.start_line) is None  # the class's own line
        asked = read("Is a refund capped when the customer asks for more than is left?")
        terms = asked.terms(store.document_frequency, store.document_count())
        composed = compose(
            asked.kind.name, [Hit(outline, 1.0, "keyword")], terms, [], facts,
            lambda path: (root / path).read_text().split("\n"),
        )  # fmt: skip
    lead = composed.extract.lead
    assert lead.startswith("`Invoice.refund` (billing.py:"), lead
    block = composed.extract.blocks[0]
    assert block.qualname == "Invoice.refund" and block.start_line <= capped <= block.end_line
    # the method is in the answer's context: its citation can be checked
    assert any(
        (b.path, b.start_line, b.end_line) == ("billing.py", member.start_line, member.end_line)
        for b in composed.extract.context
    )


LONG = (
    "def handle(request):\n"
    "    limit = compute_limit(request)\n"
    + "".join(f"    step{i} = prepare({i})\n" for i in range(60))
    + "    check(\n"
    "        request, 'the request line is longer than its size limit allows',\n"
    "    )\n"
    "    return limit\n"
)


def test_the_first_line_quotes_only_from_the_lines_it_cites(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "handler.py").write_text(LONG)
    with codecite.open_index(root) as index:
        index.update()
        store = index.store
        (function,) = [c for c in store.chunks("handler.py") if c.kind == "function"]
        asked = read("What happens when the request line is longer than the size limit?")
        terms = asked.terms(store.document_frequency, store.document_count())
        composed = compose(
            asked.kind.name, [Hit(function, 1.0, "keyword")], terms, [],
            GraphFacts(store, None), lambda path: (root / path).read_text().split("\n"),
        )  # fmt: skip
    block = composed.extract.blocks[0]
    assert block.start_line > 2, block  # a window far below `limit = compute_limit(...)`
    lead = composed.extract.lead
    assert lead.startswith(f"`handle` (handler.py:{block.start_line}-{block.end_line})"), lead
    quoted = lead_quote(lead)  # a statement it quotes is one of the lines it cites
    shown = LONG.split("\n")[block.start_line - 1 : block.end_line]
    assert not quoted or quoted in [statement(t) for _, _, t in whole_statements(shown)], lead
    # a call written over three lines is quoted whole, on one line
    assert quoted == "check(request, 'the request line is longer than its size limit allows')"
