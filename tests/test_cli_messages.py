"""What the command line says to a first-time user (issue 39, item 8): help that reads
as sentences with the usual placeholders, an empty folder, an interrupted index, an
empty question. Real processes where the exit code or stderr matters; ``--help`` in
process through typer's runner over the real command tree."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from codecite.cli import app

#: Placeholders typer 0.29 writes from Python types.
TYPE_PLACEHOLDER = re.compile(r"<(bool|str|path|int|float|list\[[^\]]*\])[^>]*>")


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            yield from _commands(sub, (*path, name))


ALL = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=lambda p: " ".join(p) or "codecite")
def test_help_shows_usual_placeholders(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not TYPE_PLACEHOLDER.search(result.output), result.output
    assert "{" not in result.output.splitlines()[1]  # usage: QUERY, not {query}


def test_help_paragraphs_are_whole_sentences() -> None:
    """No description breaks where its source line ended ("what it / raises")."""
    broken = []
    for path, command in ALL:
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        for text in texts:
            for paragraph in text.split("\n\n"):
                if "\n" in paragraph and not paragraph.startswith("\b"):
                    broken.append(f"{' '.join(path)}: {paragraph!r}")
    assert not broken
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "what it raises, what it calls" in listing
    search = CliRunner().invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    assert "error messages): its parts are searched" in search


def test_flags_show_no_placeholder_and_values_show_one() -> None:
    out = CliRunner().invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    assert re.search(r"--json\s+Print JSON", out)
    assert re.search(r"--index\s+DIR\s", out)
    assert re.search(r"--top\s+-k\s+N \[1<=x<=1000\]", out)
    assert re.search(r"--lang\s+LANG\s", out)
