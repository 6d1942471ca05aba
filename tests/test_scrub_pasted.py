"""Questions with pasted values, measured both ways (issue 39): every secret the scrubber
knows, in the forms people paste them (bare, after a key name, in each file style),
must be redacted; ordinary tokens of a question (git commit ids, UUIDs used as ids,
versions, identifiers, paths) must be kept.

tests/fixtures/pasted.json holds both lists as ``[kind, question, value]``: the value is
what must disappear (secrets) or survive (ordinary) in the scrubbed question.
Measured (issue 39): secrets 58 of 58 redacted (before: 53; the bare passwords of the
.env, TOML and Python keyword styles and two Heroku keys were kept), ordinary 60 of 60
kept (before: 51; git commit ids of 24-40 hex, a digest, ``rq01x0001z``-style ids and
``XMLHttpRequest2Polyfill`` were redacted).
"""

from __future__ import annotations

import json
from pathlib import Path

from codecite.config import Config
from codecite.scrub import KINDS, scrub, scrub_text

PASTED = json.loads((Path(__file__).parent / "fixtures" / "pasted.json").read_text("utf-8"))
SECRETS: list[list[str]] = PASTED["secrets"]
ORDINARY: list[list[str]] = PASTED["ordinary"]
#: Share of ordinary tokens that must be kept (measured: all of them).
MIN_ORDINARY_KEPT = 0.98


def test_every_pasted_secret_is_redacted() -> None:
    kept = [(kind, scrub_text(q)) for kind, q, value in SECRETS if value in scrub_text(q)]
    rate = 1 - len(kept) / len(SECRETS)
    print(f"secrets redacted: {len(SECRETS) - len(kept)}/{len(SECRETS)} ({rate:.1%})")
    assert kept == []


def test_ordinary_tokens_of_a_question_are_kept() -> None:
    lost = [(kind, scrub_text(q)) for kind, q, value in ORDINARY if value not in scrub_text(q)]
    rate = 1 - len(lost) / len(ORDINARY)
    print(f"ordinary tokens kept: {len(ORDINARY) - len(lost)}/{len(ORDINARY)} ({rate:.1%})")
    assert rate >= MIN_ORDINARY_KEPT, lost


def test_the_fixture_covers_every_kind_and_the_forms_of_issue_39() -> None:
    found: set[str] = set()
    for _, question, _ in SECRETS:
        found |= {k for k in KINDS if f"«redacted:{k}»" in scrub_text(question)}
    assert found == set(KINDS)
    kinds = {kind for kind, _, _ in SECRETS}
    for style in (".env", "properties", "json", "toml", "python kw"):
        assert f"bare password {style}" in kinds and any(style in k for k in kinds - {style})
    assert sum(kind.startswith("heroku-api-key") for kind in kinds) >= 2
    lengths = {len(v) for kind, _, v in ORDINARY if kind.startswith("sha ")}
    assert min(lengths) == 7 and max(lengths) == 40


def test_a_heroku_key_is_redacted_in_files_too_and_a_uuid_alone_is_not() -> None:
    text = (
        'HEROKU_API_KEY = "8a5f2139-79e3-4f54-afe6-d5932a620fdc"\n'
        'ORDER_ID = "8a5f2139-79e3-4f54-afe6-d5932a620fdd"\n'
    )
    result = scrub(text, Config(), "settings.py")
    assert "d5932a620fdc" not in result.text and "d5932a620fdd" in result.text
    assert result.counts == {"heroku-api-key": 1}
