"""A pasted trace through the indexed code says the question is about it: such a
question is never declined (issue 38: two QA reports were, one of them quoting Node's
"Cannot find module"), while the same words with a trace through other code are."""

from __future__ import annotations

from pathlib import Path

from repos import copy_index

import codecite
from codecite.question.parts import read_parts
from codecite.retrieve.parts import framed_files

ASKED = "Which Kubernetes namespace runs the opt-out service? The pod logs:\n\n"
TRACE = """Traceback (most recent call last):
  File "/srv/app/main.py", line 12, in handler
    total = price(order)
  File "/srv/app/.venv/lib/python3.12/site-packages/{path}", line 22, in {function}
    raise KeyError(tier)
KeyError: 'platinum'
"""


def test_frames_name_indexed_files_by_a_folder_and_the_file_name(
    tmp_path: Path, indexed_shop: Path
) -> None:
    shop = copy_index(indexed_shop, tmp_path / "shop")
    with codecite.open_index(shop) as index:
        store = index.store
        installed = read_parts(TRACE.format(path="shop/pricing.py", function="price"))
        assert framed_files(store, installed, None) == ["shop/pricing.py"]
        node = read_parts(
            "Error: boom\n    at total (/tmp/x/node_modules/shop/web/src/cart.ts:4:9)\n"
        )
        assert framed_files(store, node, None) == ["web/src/cart.ts"]
        # the reporter's own main.py, another library's file, a bare file name: none
        foreign = read_parts(TRACE.format(path="kubernetes/client.py", function="send"))
        assert framed_files(store, foreign, None) == []
        assert framed_files(store, read_parts("pricing.py fails on every order"), None) == []


def test_a_question_with_a_trace_through_the_code_is_answered(
    tmp_path: Path, indexed_shop: Path
) -> None:
    shop = copy_index(indexed_shop, tmp_path / "shop")
    with codecite.open_index(shop) as index:
        plain = index.ask(ASKED.strip(), llm="extractive")
        ours = ASKED + TRACE.format(path="shop/pricing.py", function="discount_rate_for_tier")
        framed = index.ask(ours, llm="extractive")
        other = index.ask(
            ASKED + TRACE.format(path="kubernetes/client.py", function="send"), llm="extractive"
        )
    assert plain.insufficient, plain.answer
    assert other.insufficient, other.answer
    assert not framed.insufficient, framed.answer
    assert framed.signals["framed"] == ["shop/pricing.py"]
    assert framed.answer.startswith("`discount_rate_for_tier` (shop/pricing.py:20-22)")
