"""End to end on the shop fixture: real chunker, real extraction, resolved edges."""

from __future__ import annotations

from pathlib import Path

import pytest

from codecite.chunking import chunk_file, parse
from codecite.chunking.grammars import GRAMMARS, detect_language
from codecite.config import Config
from codecite.graph import extract_facts, invert, resolve
from codecite.types import Definition, Edge, Import, Reference

SHOP = Path(__file__).parent / "fixtures" / "shop"


class Graph:
    def __init__(self) -> None:
        defs: list[Definition] = []
        imports: dict[str, tuple[Import, ...]] = {}
        refs: list[tuple[str, Reference]] = []
        self.label: dict[str, str] = {}
        for file in sorted(SHOP.rglob("*")):
            path = file.relative_to(SHOP).as_posix()
            language = detect_language(path)
            if language not in GRAMMARS:
                continue
            text = file.read_text()
            tree = parse(text, language)
            chunks = chunk_file(
                text, path=path, language=language, repo="shop", config=Config(), tree=tree
            )
            facts = extract_facts(tree, text, language=language, path=path, chunks=chunks)
            imports[path] = facts.imports
            refs.extend((path, ref) for ref in facts.refs)
            for c in chunks:
                defs.append(Definition(c.id, path, language, c.kind, c.name, c.qualname))
                self.label[c.id] = f"{path}::{'<module>' if c.kind == 'module' else c.qualname}"
        self.edges = resolve(defs, imports, refs)
        self.pairs = {(e.kind, self.label[e.src], self.label[e.dst]) for e in self.edges}

    def has(self, kind: str, src: str, dst: str) -> bool:
        return (kind, src, dst) in self.pairs


@pytest.fixture(scope="module")
def graph() -> Graph:
    return Graph()


@pytest.mark.parametrize(
    ("kind", "src", "dst"),
    [
        ("calls", "shop/orders.py::checkout", "shop/pricing.py::apply_loyalty_discount"),
        ("calls", "shop/orders.py::checkout", "shop/tax.py::calculate_tax"),
        ("calls", "shop/orders.py::checkout", "shop/payments.py::authorize"),  # module qualifier
        ("calls", "shop/orders.py::cancel", "shop/payments.py::refund_payment"),
        ("calls", "shop/payments.py::capture_payment", "shop/orders.py::Order.mark_paid"),
        ("calls", "shop/tax.py::calculate_tax", "shop/tax.py::get_rate_for_region"),
        ("calls", "shop/tax.py::calculate_tax", "shop/tax.py::_round_cents"),  # not pricing's
        ("calls", "shop/pricing.py::apply_loyalty_discount", "shop/pricing.py::_round_cents"),
        # self-method calls resolve within the class
        ("calls", "shop/orders.py::Order.summary", "shop/orders.py::Order.subtotal"),
        (
            "calls",
            "shop/commissions.py::CommissionService.calculate_payout",
            "shop/commissions.py::CommissionService.rate_for",
        ),
        ("calls", "shop/forecast.py::pipeline_value", "shop/deals.py::Deal.is_open"),
        ("calls", "web/src/cart.ts::Cart.total", "web/src/api.ts::getTaxRate"),
        ("calls", "web/src/cart.ts::calculatePriceWithTax", "web/src/format.ts::roundCents"),
        (
            "calls",
            "services/invoicing/cmd/invoicer/main.go::main",
            "services/invoicing/invoice.go::NewInvoice",
        ),
        (
            "calls",
            "services/invoicing/invoice.go::Invoice.Total",
            "services/invoicing/invoice.go::Invoice.Subtotal",
        ),
        ("inherits", "shop/orders.py::Order", "shop/models.py::BaseModel"),
        ("inherits", "shop/deals.py::Deal", "shop/models.py::BaseModel"),
        (
            "inherits",
            "services/invoicing/invoice.go::PaidInvoice",
            "services/invoicing/invoice.go::Invoice",
        ),
        ("imports", "shop/orders.py::<module>", "shop/pricing.py::<module>"),
        ("imports", "shop/orders.py::<module>", "shop/tax.py::<module>"),
        ("imports", "shop/forecast.py::<module>", "shop/deals.py::<module>"),  # relative import
        ("imports", "web/src/cart.ts::<module>", "web/src/format.ts::<module>"),
        (
            "imports",
            "services/invoicing/cmd/invoicer/main.go::<module>",
            "services/invoicing/invoice.go::<module>",
        ),
        ("tests", "tests/test_orders.py::test_cancel", "shop/orders.py::cancel"),
        ("tests", "tests/test_orders.py::test_cancel_before_capture", "shop/orders.py::cancel"),
        (
            "tests",
            "tests/test_orders.py::test_cancel_before_capture",
            "shop/payments.py::capture_payment",
        ),
        (
            "tests",
            "tests/test_pricing.py::test_gold_saves_ten_percent",
            "shop/pricing.py::apply_loyalty_discount",
        ),
        (
            "tests",
            "tests/test_commissions.py::test_calculate_payout_only_for_won_deals",
            "shop/commissions.py::CommissionService.calculate_payout",
        ),
        ("tests", "web/src/cart.test.ts::<module>", "web/src/cart.ts::calculatePriceWithTax"),
        (
            "tests",
            "services/invoicing/invoice_test.go::TestInvoice_Total",
            "services/invoicing/invoice.go::Invoice.Total",
        ),
    ],
)
def test_expected_edge(graph: Graph, kind: str, src: str, dst: str) -> None:
    assert graph.has(kind, src, dst), sorted(p for p in graph.pairs if p[1] == src)


def test_ambiguous_name_is_not_resolved(graph: Graph) -> None:
    # ``record.validate()`` could be Deal.validate or Order.validate: no edge at all.
    audit = "shop/commissions.py::CommissionService.audit"
    assert not [p for p in graph.pairs if p[1] == audit and p[0] == "calls"]


def test_no_wrong_edges(graph: Graph) -> None:
    assert not graph.has("calls", "shop/tax.py::calculate_tax", "shop/pricing.py::_round_cents")
    # test helpers are not "code under test"
    assert not any(k == "tests" and d.startswith("tests/") for k, _, d in graph.pairs)
    # make_order is a helper, not a test: its calls are no tests edges
    assert not any(k == "tests" and s.endswith("::make_order") for k, s, _ in graph.pairs)


def test_edges_are_deduplicated_without_self_edges(graph: Graph) -> None:
    keys = [(e.src, e.dst, e.kind) for e in graph.edges]
    assert len(keys) == len(set(keys))
    assert all(e.src != e.dst for e in graph.edges)
    assert all(e.src in graph.label and e.dst in graph.label for e in graph.edges)


def test_called_by_is_the_inverse_of_calls(graph: Graph) -> None:
    cancel = next(i for i, name in graph.label.items() if name == "shop/orders.py::cancel")
    callers = {graph.label[e.src] for e in invert(graph.edges)[cancel]}
    assert "tests/test_orders.py::test_cancel" in callers
    assert all(isinstance(e, Edge) and e.kind == "calls" for e in invert(graph.edges)[cancel])
