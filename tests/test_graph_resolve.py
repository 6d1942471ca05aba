"""Module resolution per language and the resolver's rules, on hand-made definitions."""

from __future__ import annotations

import time

import pytest

from codecite.graph import Resolver, invert, resolve, resolve_module
from codecite.types import Definition, Edge, Import, Reference

PATHS = {
    "shop/__init__.py",
    "shop/orders.py",
    "shop/pricing/__init__.py",
    "shop/pricing/tiers.py",
    "src/billing/invoice.py",
    "web/src/cart.ts",
    "web/src/api/index.ts",
    "web/src/format.js",
    "web/src/cart.test.ts",
    "services/invoicing/invoice.go",
    "services/invoicing/invoice_test.go",
    "src/main/java/com/shop/orders/Order.java",
    "src/main/java/com/shop/orders/Status.java",
    "Billing/Invoice.cs",
    "Billing/Tax.cs",
    "src/Billing/Invoice.php",
    "lib/bootstrap.php",
    "src/lib.rs",
    "src/orders.rs",
    "src/billing/mod.rs",
    "src/billing/tax.rs",
    "include/shop/order.h",
    "src/order.c",
    "lib/shop/order.rb",
    "lib/shop/pricing.rb",
}


@pytest.mark.parametrize(
    ("language", "module", "from_path", "expected"),
    [
        ("python", "shop.orders", "tests/test_orders.py", ["shop/orders.py"]),
        ("python", "shop.pricing", "shop/orders.py", ["shop/pricing/__init__.py"]),
        ("python", ".tiers", "shop/pricing/__init__.py", ["shop/pricing/tiers.py"]),
        ("python", "..orders", "shop/pricing/tiers.py", ["shop/orders.py"]),
        ("python", "billing.invoice", "src/app.py", ["src/billing/invoice.py"]),
        ("python", "numpy", "shop/orders.py", []),
        ("typescript", "./cart", "web/src/cart.test.ts", ["web/src/cart.ts"]),
        ("typescript", "./api", "web/src/cart.ts", ["web/src/api/index.ts"]),
        ("typescript", "./format.js", "web/src/cart.ts", ["web/src/format.js"]),
        ("typescript", "../src/cart", "web/src/cart.test.ts", ["web/src/cart.ts"]),
        ("typescript", "react", "web/src/cart.ts", []),
        ("go", "example.com/shop/invoicing", "cmd/main.go", ["services/invoicing/invoice.go"]),
        ("go", "fmt", "cmd/main.go", []),
        (
            "java",
            "com.shop.orders.Order",
            "src/x/App.java",
            ["src/main/java/com/shop/orders/Order.java"],
        ),
        (
            "java",
            "com.shop.orders.Order.create",
            "src/x/App.java",
            ["src/main/java/com/shop/orders/Order.java"],
        ),
        (
            "java",
            "com.shop.orders",
            "src/x/App.java",
            [
                "src/main/java/com/shop/orders/Order.java",
                "src/main/java/com/shop/orders/Status.java",
            ],
        ),
        ("java", "java.util.List", "src/x/App.java", []),
        ("c_sharp", "Shop.Billing", "App/Program.cs", ["Billing/Invoice.cs", "Billing/Tax.cs"]),
        ("c_sharp", "System.Linq", "App/Program.cs", []),
        ("php", "App\\Billing\\Invoice", "public/index.php", ["src/Billing/Invoice.php"]),
        ("php", "./bootstrap.php", "lib/x.php", ["lib/bootstrap.php"]),
        ("rust", "crate::orders", "src/billing/mod.rs", ["src/orders.rs"]),
        ("rust", "crate::billing::tax", "src/lib.rs", ["src/billing/tax.rs"]),
        ("rust", "super::orders", "src/billing/mod.rs", ["src/orders.rs"]),
        ("rust", "self::tax", "src/billing/mod.rs", ["src/billing/tax.rs"]),
        ("rust", "mod billing", "src/lib.rs", ["src/billing/mod.rs"]),
        ("rust", "std::io", "src/lib.rs", []),
        ("c", "shop/order.h", "src/order.c", ["include/shop/order.h"]),
        ("cpp", "<vector>", "src/order.c", []),
        ("ruby", "./pricing", "lib/shop/order.rb", ["lib/shop/pricing.rb"]),
        ("ruby", "shop/order", "app/x.rb", ["lib/shop/order.rb"]),
        ("ruby", "json", "app/x.rb", []),
    ],
)
def test_resolve_module(language: str, module: str, from_path: str, expected: list[str]) -> None:
    got = resolve_module(module, from_path=from_path, language=language, paths=PATHS)
    assert sorted(got) == sorted(expected)


def d(path: str, kind: str, qualname: str, language: str = "python") -> Definition:
    return Definition(
        f"{path}::{qualname}", path, language, kind, qualname.rpartition(".")[2], qualname
    )


def module(path: str, language: str = "python") -> Definition:
    return Definition(f"{path}::<module>", path, language, "module", "", "")


def call(
    path: str, src: str, name: str, qualifier: str = "", line: int = 1
) -> tuple[str, Reference]:
    return path, Reference(f"{path}::{src}", name, qualifier, "call", line)


DEFS = [
    module("shop/orders.py"),
    module("shop/pricing.py"),
    module("shop/models.py"),
    module("shop/deals.py"),
    module("tests/test_orders.py"),
    d("shop/orders.py", "class", "Order"),
    d("shop/orders.py", "method", "Order.cancel"),
    d("shop/orders.py", "method", "Order.validate"),
    d("shop/orders.py", "function", "cancel"),
    d("shop/orders.py", "function", "checkout"),
    d("shop/pricing.py", "function", "apply_discount"),
    d("shop/pricing.py", "function", "helper"),
    d("shop/models.py", "class", "Base"),
    d("shop/models.py", "function", "helper"),
    d("shop/deals.py", "class", "Deal"),
    d("shop/deals.py", "method", "Deal.validate"),
    d("tests/test_orders.py", "function", "test_cancel_twice"),
]
IMPORTS = {
    "shop/orders.py": [
        Import("shop.pricing", ("apply_discount",), "", 1),
        Import("shop.models", (), "m", 2),
    ],
    "tests/test_orders.py": [Import("shop", ("orders",), "", 1)],
    "shop/deals.py": [Import("shop.orders", ("Order",), "", 1)],
}


def edges_of(refs: list[tuple[str, Reference]], kind: str = "calls") -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in resolve(DEFS, IMPORTS, refs) if e.kind == kind}


def test_self_call_prefers_own_class_and_imported_names_resolve() -> None:
    refs = [
        call("shop/orders.py", "Order.cancel", "validate", "self"),
        call("shop/orders.py", "checkout", "apply_discount"),
        call("shop/orders.py", "checkout", "Base", "m"),
        call("shop/orders.py", "checkout", "cancel"),
    ]
    assert edges_of(refs) == {
        ("shop/orders.py::Order.cancel", "shop/orders.py::Order.validate"),
        ("shop/orders.py::checkout", "shop/pricing.py::apply_discount"),
        ("shop/orders.py::checkout", "shop/models.py::Base"),
        ("shop/orders.py::checkout", "shop/orders.py::cancel"),
    }


def test_module_qualifier_class_qualifier_and_variable_qualifier() -> None:
    refs = [
        call("tests/test_orders.py", "test_cancel_twice", "cancel", "orders"),
        call("shop/deals.py", "Deal", "cancel", "Order"),
        call("shop/deals.py", "Deal", "validate", "order"),
    ]
    assert edges_of(refs) == {
        ("tests/test_orders.py::test_cancel_twice", "shop/orders.py::cancel"),
        ("shop/deals.py::Deal", "shop/orders.py::Order.cancel"),
        ("shop/deals.py::Deal", "shop/orders.py::Order.validate"),
    }


def test_ambiguous_global_names_and_self_edges_are_not_resolved() -> None:
    refs = [
        call("shop/deals.py", "Deal", "helper"),  # defined in pricing.py and models.py
        call("shop/pricing.py", "apply_discount", "validate", "record"),  # two classes
        call("shop/pricing.py", "apply_discount", "apply_discount"),  # recursion
    ]
    assert edges_of(refs) == set()


def test_unique_global_name_resolves_within_the_language_family() -> None:
    defs = [*DEFS, d("web/cart.ts", "function", "checkout", "typescript")]
    refs = [call("web/other.ts", "<module>", "checkout"), call("shop/x.py", "<module>", "checkout")]
    got = {(e.src, e.dst) for e in resolve(defs, {}, refs) if e.kind == "calls"}
    assert got == {
        ("web/other.ts::<module>", "web/cart.ts::checkout"),
        ("shop/x.py::<module>", "shop/orders.py::checkout"),
    }


def test_names_from_third_party_imports_are_not_resolved() -> None:
    imports = {
        "app/x.py": [Import("stripe", ("checkout",), "", 1), Import("numpy", (), "np", 2)],
        "app/y.py": [],
    }
    refs = [
        call("app/x.py", "<module>", "checkout"),
        call("app/x.py", "<module>", "cancel", "np"),
        call("app/y.py", "<module>", "checkout"),
    ]
    got = {(e.src, e.dst) for e in resolve(DEFS, imports, refs) if e.kind == "calls"}
    assert got == {("app/y.py::<module>", "shop/orders.py::checkout")}


def test_inherits_imports_and_tests_edges() -> None:
    refs = [
        ("shop/deals.py", Reference("shop/deals.py::Deal", "Order", "", "inherit", 3)),
        call("tests/test_orders.py", "test_cancel_twice", "cancel", "orders", 7),
    ]
    edges = resolve(DEFS, IMPORTS, refs)
    kinds = {(e.kind, e.src, e.dst) for e in edges}
    assert ("inherits", "shop/deals.py::Deal", "shop/orders.py::Order") in kinds
    assert ("imports", "shop/orders.py::<module>", "shop/pricing.py::<module>") in kinds
    assert ("imports", "shop/orders.py::<module>", "shop/models.py::<module>") in kinds
    assert ("imports", "tests/test_orders.py::<module>", "shop/orders.py::<module>") in kinds
    # by call (line 7) and by naming convention (test_cancel_twice in test_orders.py)
    tests = [e for e in edges if e.kind == "tests"]
    assert tests == [
        Edge("tests/test_orders.py::test_cancel_twice", "shop/orders.py::cancel", "tests", 7)
    ]


def test_a_variable_abbreviating_a_class_resolves_to_its_method() -> None:
    """``ctx.invoke`` among ``Context.invoke`` and ``Command.invoke`` is the context's
    (click's ``Command.invoke`` calling ``ctx.invoke(self.callback)``); ``cmd.invoke``
    the command's; ``p.invoke`` is no call of either in Python, where one letter says
    nothing; in Go ``c.Bind`` is ``Context.Bind`` by the receiver convention, but ``t``
    is a *testing.T."""
    defs = [
        module("cli/core.py"),
        d("cli/core.py", "method", "Context.invoke"),
        d("cli/core.py", "method", "Command.invoke"),
        d("cli/core.py", "function", "main"),
        module("context.go", "go"),
        d("context.go", "method", "Context.Bind", "go"),
        d("context.go", "method", "DefaultBinder.Bind", "go"),
        d("context.go", "method", "tomlBinding.Name", "go"),
        d("context.go", "method", "headerBinding.Name", "go"),
        d("context.go", "function", "TestBind", "go"),
    ]
    refs = [
        call("cli/core.py", "main", "invoke", "ctx", 3),
        call("cli/core.py", "main", "invoke", "cmd", 4),
        call("cli/core.py", "main", "invoke", "p", 5),
        call("context.go", "TestBind", "Bind", "c", 6),
        call("context.go", "TestBind", "Name", "t", 7),
    ]
    got = {(e.src, e.dst, e.line) for e in resolve(defs, {}, refs) if e.kind == "calls"}
    assert got == {
        ("cli/core.py::main", "cli/core.py::Context.invoke", 3),
        ("cli/core.py::main", "cli/core.py::Command.invoke", 4),
        ("context.go::TestBind", "context.go::Context.Bind", 6),
    }


def test_a_common_method_name_in_capitals_is_no_unique_global_name() -> None:
    """Go writes common method names capitalised: ``wg.Add(1)`` (a sync.WaitGroup) and
    ``ts.Close()`` (an httptest server) are no calls of the repository's only ``Add`` or
    ``Close``; a receiver named like the class still reaches it."""
    defs = [
        module("tree.go", "go"),
        d("tree.go", "method", "RouteParams.Add", "go"),
        d("tree.go", "function", "serve", "go"),
        module("cmd/main.go", "go"),
        d("cmd/main.go", "function", "main", "go"),
    ]
    refs = [
        call("cmd/main.go", "main", "Add", "wg", 3),
        call("cmd/main.go", "main", "Add", "routeParams", 4),
    ]
    got = {(e.src, e.dst, e.line) for e in resolve(defs, {}, refs) if e.kind == "calls"}
    assert got == {("cmd/main.go::main", "tree.go::RouteParams.Add", 4)}


def test_invert_gives_callers() -> None:
    edges = [Edge("a", "b", "calls", 1), Edge("c", "b", "calls", 2), Edge("a", "b", "tests")]
    assert [e.src for e in invert(edges)["b"]] == ["a", "c"]


def test_resolver_is_fast_on_large_inputs() -> None:
    """A quarter of the target load (50k refs, 12.5k defs); the full 200k/50k load takes
    about 1.5 s of CPU on a slow 2-core machine."""
    files = 1250
    defs: list[Definition] = []
    imports: dict[str, list[Import]] = {}
    refs: list[tuple[str, Reference]] = []
    for i in range(files):
        path, nxt = f"pkg/m{i}.py", (i + 1) % files
        defs.append(module(path))
        defs.extend(d(path, "function", f"f{i}_{j}") for j in range(9))
        imports[path] = [Import(f"pkg.m{nxt}", (f"f{nxt}_0",), "", 1)]
        for j in range(40):
            name = f"f{nxt}_0" if j % 2 else f"f{(i * 7 + j) % files}_{j % 9}"
            refs.append(call(path, f"f{i}_{j % 9}", name, "" if j % 3 else "obj", j))
    started = time.process_time()
    edges = Resolver(defs, imports).edges(refs)
    elapsed = time.process_time() - started
    assert len(edges) > 35_000
    assert elapsed < 2.0, f"{len(refs)} refs / {len(defs)} defs took {elapsed:.2f}s"
