"""What the command line says to a first-time user (issue 39, item 8): help that reads
as sentences with the usual placeholders, an empty folder, an interrupted index, an
empty question. Real processes where the exit code or stderr matters; ``--help`` in
process through typer's runner over the real command tree."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from repos import make_git_repo, run_cli
from typer.testing import CliRunner

import codecite
from codecite.cli import app
from codecite.cli._messages import interrupted_message

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
                example = any(line.startswith(" ") for line in paragraph.splitlines())
                if "\n" in paragraph and not example:
                    broken.append(f"{' '.join(path)}: {paragraph!r}")
    assert not broken
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "what it raises, what it calls" in listing
    search = CliRunner().invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    assert "error messages): its parts are searched" in search


def test_help_examples_keep_their_lines_and_brackets() -> None:
    """``serve``'s example config: one setting a line, ``[repos.shop]`` shown (rich
    markup took it for a tag), no stray backspace of click's ``\\b`` marker."""
    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "[repos.shop]" in out and "\b" not in out
    assert re.search(r'auth = "token"\s*\n\s*state = "codecite-state.db"', out)


def test_flags_show_no_placeholder_and_values_show_one() -> None:
    out = CliRunner().invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    assert re.search(r"--json\s+Print JSON", out)
    assert re.search(r"--index\s+DIR\s", out)
    assert re.search(r"--top\s+-k\s+N \[1<=x<=1000\]", out)
    assert re.search(r"--lang\s+LANG\s", out)


# --- first runs: an empty folder, an interrupted index, an empty question ----------------
def _tiny_repo(root: Path, n: int, functions: int = 1) -> Path:
    files = {
        f"src/m{i}.py": "".join(
            f"def handler_{i}{'_' * (j > 0)}{j or ''}(x):\n    return x + {i}\n\n\n"
            for j in range(functions)
        )
        for i in range(n)
    }
    return make_git_repo(root, files)


def test_an_empty_folder_is_an_error_that_says_what_was_looked_for(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "yarn.lock").write_text("# lock\n")
    proc = run_cli("index", str(empty))
    assert proc.returncode == 1, proc.stderr
    assert f"nothing to index in {empty}" in proc.stderr
    assert "every file in the folder except those .gitignore ignores" in proc.stderr
    assert "skipped: 1 lockfile" in proc.stderr and "codecite index PATH" in proc.stderr
    proc = run_cli("index", str(empty), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["files_seen"] == 0
    git_empty = make_git_repo(tmp_path / "git-empty", {"notes.bin": "\x00\x01"})
    proc = run_cli("index", str(git_empty))
    assert proc.returncode == 1 and "the files git tracks" in proc.stderr


def test_an_interrupted_index_says_so_on_every_query_until_completed(tmp_path: Path) -> None:
    """Ctrl-C while parsing (here: a progress callback raising KeyboardInterrupt, as the
    signal does, after the first committed batch of files) leaves an incomplete index:
    the library, ``status``, ``search`` and ``ask`` say so (stderr; ``incomplete`` in
    JSON) until an index run completes."""
    repo = _tiny_repo(tmp_path / "repo", 450)

    def stop_mid_way(event: codecite.Progress) -> None:
        if event.stage == "parse" and event.done == 300:
            raise KeyboardInterrupt

    with codecite.open_index(repo) as index:
        with pytest.raises(codecite.Interrupted) as stopped:
            index.update(embed=False, on_progress=stop_mid_way)
        report = stopped.value.report
        assert report.interrupted_in == "parse"
        assert 0 < report.files_indexed < report.files_seen == 450
        assert f"({report.files_indexed:,} of 450 files indexed)" in index.incomplete
    message = interrupted_message(report)
    assert "while parsing files" in message and "the index is incomplete" in message
    assert "embedded" not in message

    search = run_cli("search", "handler", str(repo), "--json")
    assert search.returncode == 0, search.stderr
    assert "warning: this index is incomplete" in search.stderr
    assert "run `codecite index` to complete it" in search.stderr
    assert "of 450 files indexed" in json.loads(search.stdout)["incomplete"]
    ask = run_cli("ask", "What does handler_3 return?", str(repo), "--json")
    assert ask.returncode == 0, ask.stderr
    assert json.loads(ask.stdout)["incomplete"] and "incomplete" in ask.stderr
    status = run_cli("status", str(repo), "--json")
    assert json.loads(status.stdout)["incomplete"] and "incomplete" in status.stderr

    assert run_cli("index", str(repo), "--no-embed").returncode == 0
    search = run_cli("search", "handler", str(repo), "--json")
    assert json.loads(search.stdout)["incomplete"] == "" and "incomplete" not in search.stderr


@pytest.mark.slow
def test_ctrl_c_while_parsing_prints_what_it_left(tmp_path: Path) -> None:
    """A real SIGINT to ``codecite index`` after its first committed batch of files."""
    repo = _tiny_repo(tmp_path / "many", 1200, functions=30)  # seconds of parsing
    db_path = repo / ".codecite" / "index.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "index", str(repo), "--no-embed"],
        env={**os.environ, "CODECITE_WORKERS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test run started in the background by a shell ignores SIGINT, and a child
        # inherits that: the run gets Ctrl-C's default, as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    files = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and files == 0:
        if db_path.exists():
            try:
                con = sqlite3.connect(db_path, timeout=1)
                files = con.execute("SELECT count(*) FROM files").fetchone()[0]
                con.close()
            except sqlite3.Error:
                files = 0
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted while parsing files" in stderr
    assert "of 1,200 files are in the index, the index is incomplete" in stderr
    assert "embedded" not in stderr
    search = run_cli("search", "handler", str(repo))
    assert "this index is incomplete" in search.stderr


def test_an_empty_question_is_refused_before_anything_is_announced(tmp_path: Path) -> None:
    proc = run_cli("ask", "  ", str(tmp_path))
    assert proc.returncode == 1
    assert "the question is empty" in proc.stderr
    assert "answering with" not in proc.stderr and "Traceback" not in proc.stderr


def test_status_of_an_index_without_model_vectors_names_no_flag(tmp_path: Path) -> None:
    """``status`` said "none (index --no-embed)" of an index that flag never built (here:
    Ctrl-C before the first batch of files was committed)."""
    repo = _tiny_repo(tmp_path / "repo", 3)

    def stop_at_once(event: codecite.Progress) -> None:
        if event.stage == "parse" and event.done == 1:
            raise KeyboardInterrupt

    with codecite.open_index(repo) as index, pytest.raises(codecite.Interrupted):
        index.update(on_progress=stop_at_once)
    status = run_cli("status", str(repo), env={"COLUMNS": "250"})
    assert status.returncode == 0, status.stderr
    assert "index --no-embed)" not in status.stdout
    assert "none yet: `codecite index` computes the model's vectors" in status.stdout
    assert "(incomplete: `codecite index`)" in status.stdout
    assert "(0 of 3 files indexed)" in status.stderr


def test_ctrl_c_after_the_graph_says_the_index_is_complete(tmp_path: Path) -> None:
    repo = _tiny_repo(tmp_path / "repo", 3)

    def stop_in_static(event: codecite.Progress) -> None:
        if event.stage == "static":
            raise KeyboardInterrupt

    with codecite.open_index(repo) as index:
        with pytest.raises(codecite.Interrupted) as stopped:
            index.update(on_progress=stop_in_static)
        assert index.incomplete == ""
    assert stopped.value.report.interrupted_in == "static"
    message = interrupted_message(stopped.value.report)
    assert "the keyword index and the graph are complete" in message


def test_token_create_ends_with_the_token_on_stdout_and_on_a_shared_terminal(
    tmp_path: Path,
) -> None:
    """docs/DESIGN.md §11: the token is the last stdout line; its notes go to stderr
    first, so where both show (a terminal) it is the last line too."""
    config = tmp_path / "codecite-server.toml"
    config.write_text(f'[repos.shop]\npath = "{tmp_path}"\n')
    alone = run_cli("token", "create", "alice", "--repos", "shop,nope", "--config", str(config))
    assert alone.returncode == 0, alone.stderr
    assert re.fullmatch(r"cc_\w+_[\w-]+\n", alone.stdout)  # the token, nothing else
    assert "nope matches no repository" in alone.stderr
    both = subprocess.run(
        [sys.executable, "-m", "codecite", "token", "create", "bob", "--repos", "shop",
         "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True,
    )  # fmt: skip
    lines = both.stdout.strip().splitlines()
    assert len(lines) >= 2 and re.fullmatch(r"cc_\w+_[\w-]+", lines[-1])


def test_the_incomplete_mark_lives_in_either_store(tmp_path: Path, store_backend: str) -> None:
    """The mark is index metadata: SQLite's and PostgreSQL's alike."""
    repo = _tiny_repo(tmp_path / "repo", 250)

    def stop_mid_way(event: codecite.Progress) -> None:
        if event.stage == "parse" and event.done == 220:
            raise KeyboardInterrupt

    with codecite.open_index(repo) as index:
        with pytest.raises(codecite.Interrupted):
            index.update(embed=False, on_progress=stop_mid_way)
        assert "this index is incomplete" in index.incomplete
        assert "incomplete" in index.status().incomplete
        index.update(embed=False)
        assert index.incomplete == "" and index.status().incomplete == ""
