"""A decline names the question's words as the asker wrote them: the parts of
"opt-out" are one term, not "opt" and "out" (issue 39, item 9)."""

from __future__ import annotations

from pathlib import Path

from repos import copy_index

import codecite
from codecite.answer.wording import join_hyphenated


def test_join_hyphenated_lists_the_word_once_where_its_first_part_was() -> None:
    question = "Can customers opt-out of the e-mail digest?"
    assert join_hyphenated(question, ["opt", "out", "digest"], ["customers"]) == (
        ["opt-out", "digest"],
        ["customers"],
    )
    # a part the index holds: the word is still missing when another part is
    assert join_hyphenated(question, ["opt"], ["customers", "out"]) == (
        ["opt-out"],
        ["customers"],
    )
    assert join_hyphenated(question, [], ["e", "mail", "customers"]) == (
        [],
        ["e-mail", "customers"],
    )
    assert join_hyphenated("no hyphens here", ["a"], ["b"]) == (["a"], ["b"])


def test_a_decline_names_opt_out_as_one_word(tmp_path: Path, indexed_shop: Path) -> None:
    shop = copy_index(indexed_shop, tmp_path / "shop")
    with codecite.open_index(shop) as index:
        answer = index.ask("Which Kubernetes namespace runs the opt-out service?", llm="extractive")
    assert answer.insufficient, answer.answer
    assert "“opt-out”" in answer.answer
    assert "“opt”" not in answer.answer and "“out”" not in answer.answer
