"""Graph extraction on small real snippets, one per language (real tree-sitter)."""

from __future__ import annotations

import textwrap

import pytest

from codecite.chunking.grammars import get_parser
from codecite.graph import extract_facts
from codecite.types import Chunk, FileFacts, Import


def chunk(kind: str, qualname: str, start: int, end: int) -> Chunk:
    name = qualname.rpartition(".")[2]
    return Chunk(
        id=f"{kind}:{qualname}",
        repo="r",
        path="p",
        language="x",
        kind=kind,
        name=name,
        qualname=qualname,
        start_line=start,
        end_line=end,
        content="",
        context="",
        content_hash="",
        parent=qualname.rpartition(".")[0],
    )


def facts(language: str, source: str, *chunks: Chunk) -> FileFacts:
    text = textwrap.dedent(source).lstrip("\n")
    tree = get_parser(language).parse(text.encode())
    module = chunk("module", "<module>", 1, text.count("\n") + 1)
    return extract_facts(tree, text, language=language, path="p", chunks=[module, *chunks])


def calls(f: FileFacts) -> set[tuple[str, str, str]]:
    """(chunk id, qualifier, name) of the call references."""
    return {(r.chunk_id, r.qualifier, r.name) for r in f.refs if r.kind == "call"}


def bases(f: FileFacts) -> set[tuple[str, str, str]]:
    return {(r.chunk_id, r.qualifier, r.name) for r in f.refs if r.kind == "inherit"}


def test_python() -> None:
    f = facts(
        "python",
        """
        import a.b as c, d
        from .x import y, z as w
        from ..m import *
        from . import q
        class A(B, mod.C, metaclass=M):
            def f(self):
                self.g(1)
                a.b.c()
                x()[0]()
                super().f()
        run()
    """,
        chunk("class", "A", 5, 10),
        chunk("method", "A.f", 6, 10),
    )
    assert f.imports == (
        Import("a.b", (), "c", 1),
        Import("d", (), "", 1),
        Import(".x", ("y",), "", 2),
        Import(".x", ("z",), "w", 2),
        Import("..m", ("*",), "", 3),
        Import(".", ("q",), "", 4),
    )
    assert bases(f) == {("class:A", "", "B"), ("class:A", "mod", "C")}
    assert calls(f) == {
        ("method:A.f", "self", "g"),
        ("method:A.f", "a.b", "c"),
        ("method:A.f", "", "x"),
        ("method:A.f", "super()", "f"),
        ("method:A.f", "", "super"),
        ("module:<module>", "", "run"),
    }
    assert [r.line for r in f.refs if r.name == "g"] == [7]


def test_reference_goes_to_innermost_chunk_and_is_dropped_outside_chunks() -> None:
    text = "def f():\n    def g():\n        h()\n    k()\n\n\nlost()\n"
    tree = get_parser("python").parse(text.encode())
    only_f = [chunk("function", "f", 1, 4)]
    refs = extract_facts(tree, text, language="python", path="p", chunks=only_f).refs
    assert {(r.chunk_id, r.name) for r in refs} == {("function:f", "h"), ("function:f", "k")}


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_typescript(language: str) -> None:
    f = facts(
        language,
        """
        import D, {a as b, c} from "./x";
        import * as ns from "../y";
        import "./side";
        export { q } from "./q";
        const z = require("./z");
        class A extends B.C implements I, J {
          f() { this.g(); new Foo(); obj.h.i(); super.k(); }
        }
        interface K extends L<T> {}
        it("works", () => { calc(1); });
    """,
        chunk("class", "A", 6, 8),
        chunk("method", "A.f", 7, 7),
        chunk("class", "K", 9, 9),
    )
    assert set(f.imports) == {
        Import("./x", ("default",), "D", 1),
        Import("./x", ("c",), "", 1),
        Import("./x", ("a",), "b", 1),
        Import("../y", (), "ns", 2),
        Import("./side", (), "", 3),
        Import("./q", ("q",), "", 4),
        Import("./z", (), "z", 5),
    }
    assert bases(f) == {
        ("class:A", "B", "C"),
        ("class:A", "", "I"),
        ("class:A", "", "J"),
        ("class:K", "", "L"),
    }
    assert calls(f) == {
        ("method:A.f", "this", "g"),
        ("method:A.f", "", "Foo"),
        ("method:A.f", "obj.h", "i"),
        ("method:A.f", "super", "k"),
        ("module:<module>", "", "it"),
        ("module:<module>", "", "calc"),
    }


def test_typescript_import_forms() -> None:
    f = facts(
        "typescript",
        """
        import type { A } from "./types";
        import legacy = require("./legacy");
        export * as ns from "./all";
    """,
    )
    assert f.imports == (
        Import("./types", ("A",), "", 1),
        Import("./legacy", (), "legacy", 2),
        Import("./all", ("*",), "", 3),
    )


def test_javascript() -> None:
    f = facts(
        "javascript",
        """
        const { total } = require("./cart");
        class A extends Base {
          f() { total(this.items); import("./lazy"); }
        }
    """,
        chunk("class", "A", 2, 4),
        chunk("method", "A.f", 3, 3),
    )
    assert f.imports == (Import("./cart", ("total",), "", 1), Import("./lazy", (), "", 3))
    assert bases(f) == {("class:A", "", "Base")}
    assert calls(f) == {("method:A.f", "", "total")}


def test_go() -> None:
    f = facts(
        "go",
        """
        package main
        import "fmt"
        import (
          o "shop/orders"
          . "x/y"
        )
        type S struct { Base; *o.Other; name string }
        func (s *S) F() { s.G(); fmt.Println(1); H(); o.New[int]() }
    """,
        chunk("class", "S", 7, 7),
        chunk("method", "S.F", 8, 8),
    )
    assert f.imports == (
        Import("fmt", (), "", 2),
        Import("shop/orders", (), "o", 4),
        Import("x/y", ("*",), "", 5),
    )
    assert {name for _, _, name in bases(f)} == {"Base", "Other"}
    assert calls(f) == {
        ("method:S.F", "s", "G"),
        ("method:S.F", "fmt", "Println"),
        ("method:S.F", "", "H"),
        ("method:S.F", "o", "New"),
    }


def test_java() -> None:
    f = facts(
        "java",
        """
        package com.shop;
        import com.x.Y;
        import com.x.*;
        class A extends B implements I, p.J<T> {
          @Test void f() { this.g(); h(); Foo.bar(); new Baz<>(); a.b().c(); }
        }
    """,
        chunk("class", "A", 4, 6),
        chunk("method", "A.f", 5, 5),
    )
    assert f.imports == (Import("com.x.Y", ("Y",), "", 2), Import("com.x", ("*",), "", 3))
    assert bases(f) == {("class:A", "", "B"), ("class:A", "", "I"), ("class:A", "p", "J")}
    assert calls(f) == {
        ("method:A.f", q, n)
        for q, n in [
            ("this", "g"),
            ("", "h"),
            ("Foo", "bar"),
            ("", "Baz"),
            ("a", "b"),
            ("a.b()", "c"),
        ]
    }


def test_c_sharp() -> None:
    f = facts(
        "c_sharp",
        """
        using System;
        using Alias = Shop.Orders.Order;
        namespace Shop.Tests {
        class A : B, IFoo<int> { void F() { this.G(); H(); Foo.Bar(); new Baz(); x.Y<int>(); } }
        }
    """,
        chunk("class", "Shop.Tests.A", 4, 4),
        chunk("method", "Shop.Tests.A.F", 4, 4),
    )
    assert f.imports == (Import("System", (), "", 1), Import("Shop.Orders.Order", (), "Alias", 2))
    assert {n for _, _, n in bases(f)} == {"B", "IFoo"}
    assert {(q, n) for _, q, n in calls(f)} == {
        ("this", "G"),
        ("", "H"),
        ("Foo", "Bar"),
        ("", "Baz"),
        ("x", "Y"),
    }


def test_rust() -> None:
    f = facts(
        "rust",
        """
        use crate::a::{b, c as d, e::f};
        use std::io;
        mod orders;
        struct Order {}
        impl Display for Order {
            fn fmt(&self) { self.g(); h(); Order::new(); a::b::c(); v.iter().map(); }
        }
        trait T: U {}
    """,
        chunk("class", "Order", 4, 4),
        chunk("class", "Order", 5, 7),
        chunk("method", "Order.fmt", 6, 6),
        chunk("class", "T", 8, 8),
    )
    assert f.imports == (
        Import("crate::a", ("b",), "", 1),
        Import("crate::a", ("c",), "d", 1),
        Import("crate::a::e", ("f",), "", 1),
        Import("std", ("io",), "", 2),
        Import("mod orders", (), "", 3),
    )
    inherit = [r for r in f.refs if r.kind == "inherit"]
    # impl Display for Order: the struct's class chunk (the first "Order") inherits Display
    assert [(r.chunk_id, r.name, r.line) for r in inherit if r.name == "Display"] == [
        ("class:Order", "Display", 5)
    ]
    assert ("class:T", "", "U") in bases(f)
    assert {(q, n) for _, q, n in calls(f)} == {
        ("self", "g"),
        ("", "h"),
        ("Order", "new"),
        ("a::b", "c"),
        ("v", "iter"),
        ("v.iter()", "map"),
    }


def test_c_and_cpp() -> None:
    c = facts(
        "c",
        '#include "x.h"\n#include <stdio.h>\nint f() { g(1); s.fn(); p->fn2(); }\n',
        chunk("function", "f", 3, 3),
    )
    assert c.imports == (Import("x.h", (), "", 1), Import("<stdio.h>", (), "", 2))
    assert calls(c) == {
        ("function:f", "", "g"),
        ("function:f", "s", "fn"),
        ("function:f", "p", "fn2"),
    }
    cpp = facts(
        "cpp",
        """
        #include "shop/order.h"
        class A : public B, private ns::C<int> {
          void f() { this->g(); Foo::bar(); std::max<int>(1, 2); new Baz(); }
        };
    """,
        chunk("class", "A", 2, 4),
        chunk("method", "A.f", 3, 3),
    )
    assert cpp.imports == (Import("shop/order.h", (), "", 1),)
    assert bases(cpp) == {("class:A", "", "B"), ("class:A", "ns", "C")}
    assert {(q, n) for _, q, n in calls(cpp)} == {
        ("this", "g"),
        ("Foo", "bar"),
        ("std", "max"),
        ("", "Baz"),
    }


def test_ruby() -> None:
    f = facts(
        "ruby",
        """
        require "json"
        require_relative "order"
        class A < Shop::B
          include Comparable
          def f
            self.g(1)
            Order.create
            x.y.z
          end
        end
    """,
        chunk("class", "A", 3, 10),
        chunk("method", "A.f", 5, 9),
    )
    assert f.imports == (Import("json", (), "", 1), Import("./order", (), "", 2))
    assert bases(f) == {("class:A", "Shop", "B"), ("class:A", "", "Comparable")}
    assert calls(f) == {
        ("method:A.f", q, n)
        for q, n in [("self", "g"), ("Order", "create"), ("x", "y"), ("x.y", "z")]
    }


def test_php() -> None:
    f = facts(
        "php",
        """
        <?php
        namespace App\\Billing;
        use App\\Orders\\Order;
        use App\\Models\\{User, Team as T};
        require_once __DIR__ . '/bootstrap.php';
        class A extends B implements I { use SomeTrait;
          public function f() { $this->g(); h(); Order::create(); $x->y(); new Baz(); }
        }
    """,
        chunk("class", "App.Billing.A", 6, 8),
        chunk("method", "App.Billing.A.f", 7, 7),
    )
    assert f.imports == (
        Import("App\\Orders\\Order", ("Order",), "", 3),
        Import("App\\Models\\User", ("User",), "", 4),
        Import("App\\Models\\Team", ("Team",), "T", 4),
        Import("./bootstrap.php", (), "", 5),
    )
    assert {n for _, _, n in bases(f)} == {"B", "I", "SomeTrait"}
    assert {(q, n) for _, q, n in calls(f)} == {
        ("$this", "g"),
        ("", "h"),
        ("Order", "create"),
        ("$x", "y"),
        ("", "Baz"),
    }


def test_unsupported_language_gives_empty_facts() -> None:
    tree = get_parser("python").parse(b"# x\n")
    got = extract_facts(tree, "# x\n", language="markdown", path="a.md", chunks=[])
    assert got == FileFacts()
