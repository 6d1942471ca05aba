"""Chunking behaviour (docs/DESIGN.md section 3) on real tree-sitter parses."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codecite.chunking import chunk_file, parse
from codecite.chunking.grammars import GRAMMARS, detect_language
from codecite.config import Config
from codecite.types import Chunk, make_chunk_id, sha256_text

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
CONFIG = Config()


def chunks_of(name: str, text: str | None = None, config: Config = CONFIG) -> list[Chunk]:
    if text is None:
        text = (FIXTURES / name).read_text(encoding="utf-8")
    return chunk_file(text, path=name, language=detect_language(name), repo="r", config=config)


def one(chunks: list[Chunk], qualname: str, kind: str | None = None) -> Chunk:
    found = [c for c in chunks if c.qualname == qualname and (kind is None or c.kind == kind)]
    assert len(found) == 1, [(c.kind, c.qualname) for c in chunks]
    return found[0]


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- the Chunk fields -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.*")))
def test_fields_are_consistent(name: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    lines = text.split("\n")
    chunks = chunks_of(name)
    assert chunks
    assert len({c.id for c in chunks}) == len(chunks)
    for chunk in chunks:
        assert chunk.content_hash == sha256_text(chunk.content)
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.path == name and chunk.repo == "r"
        assert "\n" not in chunk.signature
        assert chunk.parent == chunk.qualname.rpartition(".")[0] or chunk.kind not in (
            "function",
            "method",
            "class",
        )
        if chunk.kind not in ("class", "module"):
            assert chunk.content == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    starts = [(c.start_line, -c.end_line) for c in chunks]
    assert starts == sorted(starts)


def test_ids_are_stable_and_follow_make_chunk_id() -> None:
    first, again = chunks_of("python.py"), chunks_of("python.py")
    assert [c.id for c in first] == [c.id for c in again]
    chunk = one(first, "round_money")
    assert chunk.id == make_chunk_id(
        "r", "python.py", "function", "round_money", chunk.content_hash
    )


def test_identical_definitions_get_distinct_ids() -> None:
    text = "def f():\n    return 1\n\n\ndef f():\n    return 1\n"
    chunks = chunks_of("dup.py", text)
    assert [(c.kind, c.start_line) for c in chunks] == [("function", 1), ("function", 5)]
    assert chunks[0].id != chunks[1].id
    assert chunks[1].id == make_chunk_id("r", "dup.py", "function", "f#2", chunks[1].content_hash)


def test_empty_and_blank_files_give_no_chunks() -> None:
    for name in ("a.py", "a.go", "a.md", "a.yaml", "a.txt"):
        assert chunks_of(name, "") == []
        assert chunks_of(name, "  \n\n\t\n") == []


def test_a_given_tree_is_used_and_gives_the_same_chunks() -> None:
    text = (FIXTURES / "go.go").read_text(encoding="utf-8")
    tree = parse(text, "go")
    given_tree = chunk_file(text, path="go.go", language="go", repo="r", config=CONFIG, tree=tree)
    assert given_tree == chunks_of("go.go")


# -- definitions ----------------------------------------------------------------------


def test_decorators_and_comment_blocks_stay_with_their_definition() -> None:
    py = chunks_of("python.py")
    assert one(py, "Order.tax_rate").content.startswith("    @staticmethod\n    @log_calls\n")
    assert one(py, "discount_rate").content.startswith("# Discount codes are case-insensitive.")
    assert one(py, "LineItem", "class").start_line == 36  # @dataclass
    rust = one(chunks_of("rust.rs"), "Order.subtotal")
    assert rust.content.splitlines()[:2] == [
        "    /// Sum of the lines, before tax.",
        "    #[must_use]",
    ]
    java = one(chunks_of("java.java"), "InvoiceService.issue")
    assert java.content.lstrip().startswith("@Transactional\n    @Deprecated")
    php = one(chunks_of("php.php"), "Acme.Billing.Invoice.price")
    assert php.content.lstrip().startswith("#[Override]")
    cs = one(chunks_of("c_sharp.cs"), "Acme.Billing.Order.Add")
    assert cs.content.lstrip().startswith("/// <summary>")


def test_a_comment_after_a_blank_line_or_after_code_is_not_attached() -> None:
    text = src("""
        # License header.

        def a():
            return 1  # trailing comment of a
        # comment of b
        def b():
            return 2
        """)
    chunks = chunks_of("m.py", text)
    assert one(chunks, "a").start_line == 3
    assert one(chunks, "b").start_line == 5
    assert one(chunks, "b").docstring == "comment of b"


def test_a_doc_block_one_blank_line_above_a_javascript_function_is_its_doc() -> None:
    # express writes every method so: its JSDoc, a blank line, ``res.x = function``
    text = src("""
        /**
         * Module header.
         */

        function first() {
          return 0;
        }

        /**
         * Redirect to the given `url`, defaulting to 302.
         */

        res.redirect = function redirect(url) {
          return url;
        };

        // a line comment after a blank line is not attached

        res.set = res.header = function header(field, val) {
          return val;
        };
        """)
    chunks = chunks_of("lib/response.js", text)
    assert one(chunks, "first").start_line == 5  # a file's header is the module's
    redirect = one(chunks, "res.redirect")
    assert redirect.start_line == 9
    assert redirect.docstring == "Redirect to the given `url`, defaulting to 302."
    chained = one(chunks, "res.set")  # a chained assignment is named by its first target
    assert chained.start_line == 19 and chained.kind == "function"


def test_a_getter_defined_by_a_call_is_a_function_chunk() -> None:
    text = src("""
        /**
         * Parse the subdomains of the host.
         */
        defineGetter(req, 'subdomains', function subdomains() {
          return this.hostname.split('.');
        });

        Object.defineProperty(Request.prototype, 'secure', {
          get: function () { return this.protocol === 'https'; }
        });

        describe('req.subdomains', function () {
          it('works', function () {});
        });
        """)
    chunks = chunks_of("lib/request.js", text)
    getter = one(chunks, "req.subdomains")
    assert (getter.kind, getter.start_line, getter.end_line) == ("function", 1, 6)
    assert getter.docstring == "Parse the subdomains of the host."
    assert one(chunks, "Request.secure").kind == "method"
    assert not any(c.qualname.endswith("works") for c in chunks)  # a test's call is no getter


def test_a_files_description_is_not_its_licence_notice() -> None:
    """Many files open with a copyright or licence notice; the file's description (a
    module chunk's docstring, its summary in answers and docs) is the first comment
    block after it, and nothing when the notice is all there is."""
    go = src("""
        // Copyright 2014 Steve Francia <spf@spf13.com>.
        //
        // Use of this source code is governed by an MIT-style
        // license that can be found in the LICENSE file.

        // Viper is an application configuration system.
        // It reads flags, environment variables and files.

        package viper

        var v *Viper
        """)
    module = one(chunks_of("viper.go", go), "viper", "module")
    assert module.docstring == (
        "Viper is an application configuration system.\nIt reads flags, environment "
        "variables and files."
    )
    js = src("""
        /*!
         * express
         * Copyright(c) 2009-2013 TJ Holowaychuk
         * MIT Licensed
         */

        'use strict';

        var debug = require('debug')('express:router');
        """)
    assert one(chunks_of("lib/router.js", js), "lib/router", "module").docstring == ""
    described = src("""
        // Package bind reads a request into a struct.
        package bind

        var x = 1
        """)
    assert one(chunks_of("bind.go", described), "bind", "module").docstring == (
        "Package bind reads a request into a struct."
    )


def test_docstrings_and_doc_comments_are_cleaned() -> None:
    py = chunks_of("python.py")
    assert one(py, "Order.pay").docstring == (
        "Charge the order through a payment gateway.\n\nRetries on transient failures."
    )
    assert one(py, "Order", "class").docstring == "A customer order with its lines and discount."
    assert one(py, "python", "module").docstring.startswith("Billing: orders")
    js = one(chunks_of("javascript.js"), "cartTotal")
    assert js.docstring.startswith("Sum the line totals of a cart.\n@param")
    assert one(chunks_of("rust.rs"), "Order.new").docstring == "Create an empty order."
    assert one(chunks_of("go.go"), "Issue").docstring == "Issue turns an order into an invoice."
    cs = one(chunks_of("c_sharp.cs"), "Acme.Billing.Order.Add")
    assert cs.docstring == "Adds a line to the order.\nThe line to add."
    java = [c for c in chunks_of("java.java") if c.qualname == "InvoiceService.total"][1]
    assert java.docstring.startswith("Total of the lines after a discount, before tax.")


def test_signatures_are_the_header_on_one_line() -> None:
    assert one(chunks_of("python.py"), "Order.pay").signature == (
        "async def pay(self, gateway, *, retries: int = 3) -> str:"
    )
    java = [c for c in chunks_of("java.java") if c.qualname == "InvoiceService.total"]
    assert java[0].signature == "public BigDecimal total(List<Line> lines)"
    assert one(chunks_of("java.java"), "InvoiceService.rate").signature == (
        "public BigDecimal rate(String country)"
    )
    assert one(chunks_of("go.go"), "Order.Total").signature == (
        "func (o Order) Total(policy TaxPolicy) (Cents, error)"
    )
    php = one(chunks_of("php.php"), "Acme.Billing.Invoice.__construct")
    assert php.signature == (
        "public function __construct( private readonly string $number, "
        "private string $country = 'FR', )"
    )


def test_qualnames_per_language() -> None:
    expected = {
        "python.py": ["Order.Status.Transition.allowed", "Order.__init__"],
        "go.go": ["Order.Subtotal", "Cents.String", "Issue"],
        "rust.rs": ["Order.cancel", "Order.fmt", "TableTax.rate", "tests.discount_is_capped"],
        "cpp.cpp": [
            "billing.Invoice.total",
            "billing.Invoice.Builder.build",
            "billing.tax.rate_for",
            "billing.LineItem.total",
        ],
        "c_sharp.cs": ["Acme.Billing.Order.Receipt.Render", "Acme.Billing.TaxTable.RateFor"],
        "ruby.rb": ["Billing.Order.from_hash", "Billing.Order.empty", "format_amount"],
        "php.php": ["Acme.Billing.tax_rate", "Acme.Billing.Discountable.applyDiscount"],
        "javascript.js": ["PaymentProcessor.handleRefund", "receipts.renderShort", "Invoice.label"],
        "typescript.ts": ["Discounts.percent", "InvoiceService.nextNumber"],
    }
    for name, qualnames in expected.items():
        found = {c.qualname for c in chunks_of(name)}
        assert set(qualnames) <= found, name
    go = one(chunks_of("go.go"), "Order.Subtotal")
    assert (go.kind, go.name, go.parent) == ("method", "Subtotal", "Order")
    fmt = one(chunks_of("rust.rs"), "Order.fmt")
    assert (fmt.kind, fmt.parent) == ("method", "Order")


def test_nested_functions_stay_inside_their_parent() -> None:
    chunks = chunks_of("python.py")
    assert "normalise" not in {c.name for c in chunks}
    assert "def normalise" in one(chunks, "discount_rate").content


def test_javascript_exports_and_function_values() -> None:
    js = chunks_of("javascript.js")
    assert one(js, "cartTotal").content.splitlines()[4] == "export function cartTotal(lines) {"
    assert one(js, "checkout").content.startswith("export default function checkout")
    assert one(js, "applyDiscount").kind == "function"
    assert one(js, "roundCents").signature == "const roundCents = function (amount)"
    assert one(js, "PaymentProcessor.name").signature == "get name()"
    assert one(js, "Invoice.label").kind == "method"
    tsx = chunks_of("tsx.tsx")
    assert one(tsx, "InvoiceTable").content.startswith("export const InvoiceTable: React.FC<Props>")


def test_commonjs_exports_of_a_class_and_of_an_object_of_functions() -> None:
    """``module.exports = class X {...}`` is class X with its methods; an object of
    functions given to ``module.exports`` is named by its module (koa's
    ``lib/response.js``: ``response.body``), or by the variable that also holds it."""
    app = src("""
        const Emitter = require('events')

        module.exports = class Application extends Emitter {
          constructor (options) {
            super()
            this.middleware = []
          }

          use (fn) {
            this.middleware.push(fn)
            return this
          }
        }
        """)
    chunks = chunks_of("lib/application.js", app)
    assert one(chunks, "Application").kind == "class"
    use = one(chunks, "Application.use")
    assert use.kind == "method" and use.signature == "use (fn)"
    response = src("""
        module.exports = {
          get body () {
            return this._body
          },

          set body (val) {
            this._body = val
          },

          redirect (url) {
            this.set('Location', url)
          }
        }
        """)
    chunks = chunks_of("lib/response.js", response)
    assert one(chunks, "response.redirect").start_line == 10
    assert [c.start_line for c in chunks if c.qualname == "response.body"] == [2, 6]
    context = src("""
        const proto = module.exports = {
          inspect () {
            return this.toJSON()
          }
        }
        """)
    assert one(chunks_of("lib/context.js", context), "proto.inspect").kind == "function"
    # an exported class with no name is named as an exported function is, or by its module
    anonymous = "export default class extends Base {\n  render () {\n    return 1\n  }\n}\n"
    assert one(chunks_of("view.js", anonymous), "default.render").kind == "method"
    plain = "module.exports = class {\n  close () {\n    return 1\n  }\n}\n"
    assert one(chunks_of("lib/pool.js", plain), "pool.close").kind == "method"
    # an empty object, or a function given to module.exports, is no namespace
    empty = (
        "var app = exports = module.exports = {};\napp.init = function init() {\n  return 1\n}\n"
    )
    assert one(chunks_of("lib/app.js", empty), "app.init")


def test_documented_constants_are_chunks_of_their_own() -> None:
    """A top-level declaration of one name that says what it is (a comment above it,
    Sphinx's ``#:``, a Python attribute docstring below it, a comment on its line) is a
    ``constant`` chunk with that doc; an undocumented one, a ``require`` and a
    declaration of several names stay in the module's lines."""
    settings = src('''
        import os

        #: Seconds a worker may stay silent before it is considered gone.
        WORKER_TTL = 420

        DEFAULT_RESULT_TTL = 500
        """ Seconds to keep job results
        after the job finished.
        """

        LOG_FORMAT = "%(message)s"
        a, b = 1, 2
        ''')
    chunks = chunks_of("defaults.py", settings)
    ttl = one(chunks, "WORKER_TTL", "constant")
    assert (ttl.start_line, ttl.end_line) == (3, 4)
    assert ttl.docstring == "Seconds a worker may stay silent before it is considered gone."
    result = one(chunks, "DEFAULT_RESULT_TTL", "constant")
    assert (result.start_line, result.end_line) == (6, 9), result
    assert result.docstring.startswith("Seconds to keep job results")
    assert result.content.splitlines()[0] == "DEFAULT_RESULT_TTL = 500"
    assert result.signature == "DEFAULT_RESULT_TTL = 500"
    (module,) = [c for c in chunks if c.kind == "module"]
    assert "LOG_FORMAT" in module.content and "a, b = 1, 2" in module.content
    assert "WORKER_TTL" not in module.content
    js = src("""
        /**
         * Module dependencies.
         */

        var http = require('http');

        // Largest body, in bytes, read into memory.
        export const MAX_BODY = 1024 * 1024;
        const plain = 3;

        /**
         * Application prototype.
         */
        var app = exports = module.exports = {};
        // filled below
        const handlers = {};
        """)
    chunks = chunks_of("limits.js", js)
    assert [(c.kind, c.qualname) for c in chunks if c.kind == "constant"] == [
        ("constant", "MAX_BODY")
    ]
    go = "package gin\n\nconst defaultMultipartMemory = 32 << 20 // 32 MB\n"
    memory = one(chunks_of("gin.go", go), "defaultMultipartMemory", "constant")
    assert memory.docstring == "32 MB" and memory.start_line == memory.end_line == 3


def test_typescript_overloads_stay_with_the_implementation() -> None:
    ts = chunks_of("typescript.ts")
    fmt = one(ts, "format")
    assert (fmt.start_line, fmt.end_line) == (24, 30)
    assert fmt.content.count("export function format(") == 3
    add = one(ts, "InvoiceService.add")
    assert add.content.lstrip().startswith("add(item: LineItem): this;")
    kinds = {c.qualname: c.kind for c in ts}
    assert kinds["LineItem"] == kinds["InvoiceStatus"] == kinds["BaseDocument"] == "class"


def test_java_overloads_are_separate_chunks() -> None:
    totals = [c for c in chunks_of("java.java") if c.qualname == "InvoiceService.total"]
    assert [(c.start_line, c.end_line) for c in totals] == [(63, 65), (67, 78)]
    assert totals[0].id != totals[1].id


# -- context -------------------------------------------------------------------------


def test_method_context_has_path_imports_and_class_chain() -> None:
    chunk = one(chunks_of("python.py"), "Order.Status.Transition.allowed")
    lines = chunk.context.splitlines()
    assert lines[0] == "# path: python.py"
    assert "from decimal import ROUND_HALF_UP, Decimal" in lines
    assert lines[-3:] == ["class Order:", "    class Status:", "        class Transition:"]


def test_function_context_has_path_and_imports_only() -> None:
    context = one(chunks_of("python.py"), "round_money").context
    assert context.startswith("# path: python.py\n# imports:\nfrom __future__ import annotations")
    assert "# in:" not in context


def test_methods_defined_outside_their_class_get_its_header() -> None:
    go = one(chunks_of("go.go"), "Order.Subtotal").context
    assert go.endswith("// in:\ntype Order struct")
    cpp = one(chunks_of("cpp.cpp"), "billing.Invoice.total").context
    assert cpp.endswith("// in:\nnamespace billing\n    class Invoice")
    rust = one(chunks_of("rust.rs"), "Order.fmt").context
    assert rust.endswith("// in:\nimpl fmt::Display for Order")
    assert one(chunks_of("rust.rs"), "Order.new").context.endswith("// in:\nimpl Order")


def test_import_lines_in_context_are_capped() -> None:
    text = "".join(f"import mod{i}\n" for i in range(30)) + "\n\ndef f():\n    return 1\n"
    context = one(chunks_of("many.py", text), "f").context
    assert "import mod14" in context and "import mod15" not in context
    assert context.endswith("# ... 15 more import lines")


def test_require_and_use_lines_count_as_imports() -> None:
    assert 'require_relative "money"' in one(chunks_of("ruby.rb"), "format_amount").context
    js = one(chunks_of("javascript.js"), "cartTotal").context
    assert 'const { EventEmitter } = require("events");' in js
    assert "use std::fmt;" in one(chunks_of("rust.rs"), "apply_discount").context


# -- classes ---------------------------------------------------------------------------


def test_class_chunk_is_a_skeleton_over_the_whole_class() -> None:
    order = one(chunks_of("python.py"), "Order", "class")
    assert (order.start_line, order.end_line) == (49, 92)
    assert "def subtotal(self) -> Decimal:\n        ..." in order.content
    assert '"""Charge the order through a payment gateway.' in order.content
    assert "round_money(net" not in order.content  # bodies are elided
    assert 'currency = "EUR"' in order.content
    assert 'class Status:\n        """Allowed order states."""\n        ...' in order.content
    assert order.signature == "class Order:"
    java = one(chunks_of("java.java"), "InvoiceService.Invoice", "class")
    assert "public Invoice add(Line line) { /* ... */ }" in java.content
    ruby = one(chunks_of("ruby.rb"), "Billing.LineItem", "class")
    assert "attr_reader :sku, :quantity, :unit_price" in ruby.content
    assert "  def total\n    # ...\n  end" in ruby.content


def test_class_like_kinds_per_language() -> None:
    expected = {
        "go.go": {"LineItem", "Order", "TaxPolicy", "Invoice", "flatPolicy"},
        "rust.rs": {"LineItem", "OrderStatus", "Order", "TaxPolicy", "TableTax", "Box"},
        "c.c": {"line_item", "invoice", "payment_status"},
        "c_sharp.cs": {
            "Acme.Billing.IDiscountPolicy",
            "Acme.Billing.LineItem",
            "Acme.Billing.Money",
            "Acme.Billing.OrderStatus",
        },
        "php.php": {"Acme.Billing.Priced", "Acme.Billing.Discountable", "Acme.Billing.Status"},
        "java.java": {"InvoiceService.Status", "InvoiceService.Line", "TaxCalculator", "Audited"},
        "ruby.rb": {"Billing", "Billing.Discounts", "Billing.PaymentError"},
    }
    for name, qualnames in expected.items():
        classes = {c.qualname for c in chunks_of(name) if c.kind == "class"}
        assert qualnames <= classes, name
    grouped = one(chunks_of("go.go"), "flatPolicy")
    assert grouped.content == "type flatPolicy struct{ rate float64 }"


def test_class_comes_before_its_methods() -> None:
    chunks = chunks_of("java.java")
    order = [c.qualname for c in chunks]
    assert order.index("InvoiceService") < order.index("InvoiceService.Status")
    assert order.index("InvoiceService.Status") < order.index("InvoiceService.Status.isFinal")


def test_long_class_outline_is_cut_between_members() -> None:
    fields = "".join(
        f"    #: How many widgets of kind {i} a batch holds.\n    widgets_{i} = {i}\n\n"
        for i in range(30)
    )
    methods = "".join(
        f'    def step_{i}(self) -> int:\n        """Run step {i}."""\n'
        f"        total = {i}\n        return total * 2\n\n"
        for i in range(6)
    )
    text = f'class Settings:\n    """Every setting of a batch."""\n\n{fields}{methods}'
    config = Config(max_chunk_lines=40, class_part_lines=25)
    chunks = chunks_of("settings.py", text, config)
    parts = [c for c in chunks if c.kind == "class"]
    assert [c.part for c in parts] == list(range(1, len(parts) + 1)) and len(parts) >= 4
    assert parts[0].start_line == 1 and parts[-1].end_line == len(text.rstrip().splitlines())
    assert parts[0].content.startswith('class Settings:\n    """Every setting of a batch."""')
    for before, after in itertools.pairwise(parts):
        assert before.end_line < after.start_line  # each part over its own lines
        label = f"# part {after.part} of {len(parts)} of:"
        assert after.context.endswith(f"{label}\nclass Settings:")
    assert all(c.qualname == "Settings" and c.content.count("\n") < 40 for c in parts)
    holding = [c for c in parts if "widgets_17 = 17" in c.content]
    assert len(holding) == 1 and "#: How many widgets of kind 17" in holding[0].content
    lines = text.splitlines()
    at = lines.index("    widgets_17 = 17") + 1
    assert holding[0].start_line <= at <= holding[0].end_line
    assert "total * 2" not in "".join(c.content for c in parts)  # bodies still elided
    assert len([c for c in chunks if c.kind == "method"]) == 6
    # the same class under the default limits is one outline
    whole = [c for c in chunks_of("settings.py", text) if c.kind == "class"]
    assert len(whole) == 1 and whole[0].part == 0


def test_long_brace_class_parts_end_with_its_closing_brace() -> None:
    members = "".join(f"    /** Limit {i}. */\n    public int limit{i} = {i};\n" for i in range(40))
    text = f"public class Limits {{\n{members}}}\n"
    parts = [
        c
        for c in chunks_of("Limits.java", text, Config(max_chunk_lines=30, class_part_lines=20))
        if c.kind == "class"
    ]
    assert len(parts) >= 3
    assert parts[0].content.startswith("public class Limits {")
    assert parts[-1].content.rstrip().endswith("}") and parts[-1].end_line == 82


# -- long functions -----------------------------------------------------------------------


def test_long_function_is_split_at_statements() -> None:
    parts = [c for c in chunks_of("python.py") if c.qualname == "build_invoice_lines"]
    assert [c.part for c in parts] == [1, 2]
    assert parts[0].start_line == 99 and parts[-1].end_line == 258
    assert parts[0].end_line + 1 == parts[1].start_line
    assert parts[0].content.startswith("def build_invoice_lines(")
    assert parts[1].content.startswith("    # Footer with the company details.")
    for part in parts:
        assert part.end_line - part.start_line + 1 <= CONFIG.index.max_chunk_lines
        assert part.context.endswith(f"of:\n{part.signature}")
        assert part.signature.startswith("def build_invoice_lines(order: Order")
    assert "# part 2 of 2 of:" in parts[1].context


def test_split_limit_comes_from_config() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    text = f"func f() {{\n{body.replace('    ', chr(9))}}}\n"
    parts = chunks_of("long.go", text, Config(max_chunk_lines=15))
    assert len(parts) == 3
    assert all(c.end_line - c.start_line + 1 <= 15 for c in parts)
    assert parts[-1].end_line == 42 and parts[0].start_line == 1


# -- module chunks ----------------------------------------------------------------------------


def test_module_chunk_holds_imports_and_top_level_code() -> None:
    module = one(chunks_of("python.py"), "python", "module")
    assert module.qualname == "python" and module.kind == "module"
    assert "import logging" in module.content and "CENT = Decimal" in module.content
    assert "def round_money" not in module.content
    assert "# ...\nif __name__ ==" in module.content
    assert (module.start_line, module.end_line) == (1, 262)


def test_module_qualname_is_the_python_module_path() -> None:
    text = "import os\n"
    assert chunks_of("src/billing/orders.py", text)[0].qualname == "billing.orders"
    init = chunks_of("billing/__init__.py", text)[0]
    assert (init.name, init.qualname) == ("billing", "billing")
    assert chunks_of("lib/billing/orders.go", "package billing\n")[0].qualname == (
        "lib/billing/orders"
    )


def test_no_module_chunk_without_top_level_statements() -> None:
    chunks = chunks_of("only.py", "# helpers\n\ndef f():\n    return 1\n")
    assert [c.kind for c in chunks] == ["function"]


# -- text, markdown, windows ---------------------------------------------------------------------


def test_markdown_sections_carry_their_heading_path() -> None:
    chunks = chunks_of("markdown.md")
    stacking = one(chunks, "Billing > Discounts > Stacking")
    assert (stacking.kind, stacking.name) == ("section", "Stacking")
    assert stacking.context == "path: markdown.md\nsection: Billing > Discounts > Stacking"
    discounts = one(chunks, "Billing > Discounts")
    assert "# Not a heading: this is code." in discounts.content
    rates = one(chunks, "Billing > Taxes > Rates")
    assert rates.content.startswith("## Taxes\n\n### Rates")  # empty heading merged forward
    assert one(chunks, "markdown").start_line == 1  # front matter and preamble


def test_long_markdown_section_is_cut_into_parts() -> None:
    text = "# Big\n\n" + "".join(f"line {i}\n" for i in range(200))
    chunks = chunks_of("big.md", text)
    assert len(chunks) > 1 and all(c.kind == "section" and c.qualname == "Big" for c in chunks)
    assert [c.part for c in chunks] == list(range(1, len(chunks) + 1))


def test_small_config_is_one_file_chunk() -> None:
    (chunk,) = chunks_of("config.yaml")
    assert (chunk.kind, chunk.name, chunk.qualname) == ("file", "config.yaml", "config.yaml")
    assert chunk.context == "path: config.yaml"


def test_large_text_uses_overlapping_windows() -> None:
    chunks = chunks_of("config.json")
    assert [c.kind for c in chunks] == ["window", "window"]
    assert chunks[0].end_line - chunks[1].start_line + 1 == CONFIG.index.window_overlap
    assert chunks[0].end_line - chunks[0].start_line + 1 == CONFIG.index.window_lines
    text = "".join(f"word {i}\n" for i in range(100))
    windows = chunks_of("notes.txt", text, Config(window_lines=30, window_overlap=10))
    assert [(c.start_line, c.end_line) for c in windows] == [
        (1, 30),
        (21, 50),
        (41, 70),
        (61, 90),
        (81, 100),
    ]


# -- syntax errors ---------------------------------------------------------------------------------

BROKEN = {
    "python": "def f(:\n    return )\nclass\n",
    "javascript": "function a( {\n  return 1;\n}\nclass { = }\n",
    "typescript": "interface X { a: ; }\nfunction f(x: ): {\n",
    "tsx": "const A = () => <div><span></div>;\nexport default (\n",
    "go": "package x\nfunc (o *Order Total() {\n\treturn\n",
    "java": "public class A {\n  void f( {\n}\n",
    "rust": "impl Order {\n    fn cancel(&mut self -> {\n}\n",
    "c": "int f(int a {\n  return a;\n",
    "cpp": "namespace a {\nclass B : {\n  void f() {\n}\n",
    "c_sharp": "namespace A {\n class B {\n  void F( {\n}\n",
    "ruby": "class A\n  def f(\n    1 +\nend\n",
    "php": "<?php\nfunction f( {\n  return ;\nclass {\n",
}
GARBAGE = ')(]] }}{{ ;; => :: <<>> @@ #[ "\n' * 5


@pytest.mark.parametrize("language", sorted(GRAMMARS))
def test_broken_and_garbage_code_never_raises(language: str) -> None:
    path = f"broken.{language}"
    for text in (BROKEN[language], GARBAGE, BROKEN[language][: len(BROKEN[language]) // 2]):
        chunks = chunk_file(text, path=path, language=language, repo="r", config=CONFIG)
        lines = text.split("\n")
        assert all(1 <= c.start_line <= c.end_line <= len(lines) for c in chunks)
    # PHP outside ``<?php`` is literal text (a module chunk), so open the tag first.
    garbage_text = "<?php\n" + GARBAGE if language == "php" else GARBAGE
    garbage = chunk_file(garbage_text, path=path, language=language, repo="r", config=CONFIG)
    assert "window" in {c.kind for c in garbage}


def test_unparsable_region_falls_back_to_windows_and_the_rest_is_kept() -> None:
    chunks = chunks_of("broken.py")
    assert [(c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("module", 1, 3),
        ("function", 6, 7),
        ("window", 10, 15),
    ]


@settings(max_examples=40, deadline=None, database=None)
@given(
    language=st.sampled_from(sorted(GRAMMARS)),
    text=st.text(alphabet=st.sampled_from(list("{}()[];:=<>\"'#/*\\\n \tabcdef{}")), max_size=400),
)
def test_random_text_never_raises(language: str, text: str) -> None:
    chunks = chunk_file(text, path="x", language=language, repo="r", config=CONFIG)
    assert all(c.start_line <= c.end_line for c in chunks)


def test_long_module_is_cut_into_parts_at_statements() -> None:
    text = "import os\n\n" + "".join(f"VALUE_{i} = {{\n    'n': {i},\n}}\n" for i in range(30))
    chunks = chunks_of("table.py", text, Config(max_chunk_lines=20))
    assert {c.kind for c in chunks} == {"module"} and len(chunks) > 1
    assert [c.part for c in chunks] == list(range(1, len(chunks) + 1))
    for chunk in chunks:
        assert chunk.end_line - chunk.start_line + 1 <= 20
        assert chunk.content.splitlines()[0].startswith(("import os", "VALUE_"))
    assert "import os" not in chunks[0].context and "import os" in chunks[1].context


def test_python_skeleton_keeps_tab_indentation() -> None:
    text = 'class A:\n\tdef f(self):\n\t\t"""Doc."""\n\t\treturn 1\n\n\tdef g(self): return 2\n'
    skeleton = one(chunks_of("tabs.py", text), "A", "class").content
    assert skeleton == 'class A:\n\tdef f(self):\n\t\t"""Doc."""\n\t\t...\n\n\tdef g(self): ...'
    assert not parse(skeleton, "python").root_node.has_error


def test_a_nul_in_a_docstring_stays_written_as_an_escape() -> None:
    """A docstring's value may hold a NUL (``C{'\\x00'}`` in Twisted, ``b'\\x00'`` in
    astropy); it is kept as written, so no stored text holds one."""
    text = 'def f():\n    """The path may begin with C{\'\\x00\'} on Linux."""\n    return 1\n'
    (chunk,) = [c for c in chunks_of("nul.py", text) if c.name == "f"]
    assert chunk.docstring == "The path may begin with C{'\\x00'} on Linux."
    assert "\0" not in chunk.docstring
