"""The compact text embedded for a chunk."""

from __future__ import annotations

from dataclasses import replace

from codecite.embed import DEFAULT_MAX_CHARS, PROSE_MAX_CHARS, embed_text
from codecite.types import Chunk

METHOD = '''    @cached  # noqa: E501
    def calculateDiscount(self, customer: Customer, total: float) -> float:
        """Compute the discount for a customer.

        Loyal customers get 10% off.
        """
        # ----------------------------------------
        # pylint: disable=too-many-branches
        # loyal customers get a bigger discount
        KEY = "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHZlcnkgbG9uZyBiYXNlNjQgYmxvYiB0aGF0IHNob3VsZCBi"
        message = "a rather long message string that goes on and on and on for ever and more"
        table = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]

        if customer.years > 5:
            return total * 0.1
        else:
            pass
        return 0.0
'''

CHUNK = Chunk(
    id="c1",
    repo="shop",
    path="shop/pricing.py",
    language="python",
    kind="method",
    name="calculateDiscount",
    qualname="PricingService.calculateDiscount",
    start_line=10,
    end_line=28,
    content=METHOD,
    context="shop/pricing.py\nclass PricingService:",
    content_hash="h",
    signature="def calculateDiscount(self, customer: Customer, total: float) -> float:",
    docstring="Compute the discount for a customer.\n\nLoyal customers get 10% off.",
    parent="PricingService",
)


def test_format() -> None:
    text = embed_text(CHUNK)
    lines = text.splitlines()
    assert lines[0] == (
        "shop/pricing.py method PricingService.calculateDiscount (calculate discount)"
    )
    assert lines[1] == CHUNK.signature
    assert lines[2:4] == ["Compute the discount for a customer.", "Loyal customers get 10% off."]
    assert text.count("def calculateDiscount") == 1
    assert text.count("Loyal customers get 10% off.") == 1
    assert "# loyal customers get a bigger discount" in lines
    assert "if customer.years > 5:" in lines and "return total * 0.1" in lines


def test_noise_is_dropped() -> None:
    text = embed_text(CHUNK)
    assert "noqa" not in text and "pylint" not in text and "-----" not in text
    assert "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHZlcnkgbG9uZyBiYXNlNjQgYmxvYiB0aGF0" not in text
    assert "for ever and more" not in text and "a rather long message" in text
    assert "9, 10, 11" not in text
    assert "\n\n" not in text and "else:" not in text and "pass" not in text.split()
    assert not any(line != line.strip() for line in text.splitlines())


def test_pure_and_capped() -> None:
    assert embed_text(CHUNK) == embed_text(CHUNK)
    assert len(embed_text(CHUNK)) <= DEFAULT_MAX_CHARS
    long = replace(
        CHUNK, content=METHOD + "\n".join(f"value_{i} = compute({i})" for i in range(500))
    )
    text = embed_text(long)
    assert len(text) <= DEFAULT_MAX_CHARS
    assert text.startswith("shop/pricing.py method")
    short = embed_text(long, max_chars=150)
    assert len(short) <= 150 and short.startswith("shop/pricing.py method")


def test_long_docstring_leaves_room_for_code() -> None:
    chunk = replace(CHUNK, docstring="word " * 600)
    text = embed_text(chunk)
    assert len(text) <= DEFAULT_MAX_CHARS
    assert text.count("word") <= DEFAULT_MAX_CHARS // 3 // 5
    assert "# loyal customers get a bigger discount" in text
    assert "return total * 0.1" in embed_text(chunk, max_chars=900)


def test_markdown_keeps_headings() -> None:
    section = replace(
        CHUNK,
        language="markdown",
        kind="section",
        name="Install",
        qualname="Guide > Install",
        path="docs/guide.md",
        signature="",
        docstring="",
        content="# Install\n\nRun `pip install shop`.\n\n## Options\n\n- fast\n",
    )
    text = embed_text(section)
    assert text.splitlines() == [
        "docs/guide.md section Guide > Install",
        "# Install",
        "Run `pip install shop`.",
        "## Options",
        "- fast",
    ]


def test_snake_case_name_is_not_repeated() -> None:
    chunk = replace(
        CHUNK, name="calculate_discount", qualname="calculate_discount", kind="function"
    )
    assert embed_text(chunk).splitlines()[0] == "shop/pricing.py function calculate_discount"


def test_window_path_is_not_repeated() -> None:
    window = replace(
        CHUNK,
        language="text",
        kind="window",
        name="messages.po",
        qualname="locale/sk/messages.po",
        path="locale/sk/messages.po",
        signature="",
        docstring="",
        content='msgid "Save"\nmsgstr "Uložiť"\n',
    )
    assert embed_text(window).splitlines()[0] == "locale/sk/messages.po window"
    assert embed_text(replace(window, qualname="messages.po")).splitlines()[0] == (
        "locale/sk/messages.po window"
    )


def test_prose_gets_a_larger_default_budget() -> None:
    doc = replace(
        CHUNK,
        language="markdown",
        kind="section",
        signature="",
        docstring="",
        content="\n".join(f"Sentence number {i} explains the shop." for i in range(200)),
    )
    assert DEFAULT_MAX_CHARS < len(embed_text(doc)) <= PROSE_MAX_CHARS
    assert len(embed_text(doc, max_chars=300)) <= 300
