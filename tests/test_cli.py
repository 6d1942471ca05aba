"""The command line as a user runs it: real processes, exit codes, JSON contracts."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from repos import make_git_repo

CHUNK_FIELDS = {
    "id",
    "repo",
    "path",
    "language",
    "kind",
    "name",
    "qualname",
    "start_line",
    "end_line",
    "content",
    "context",
    "content_hash",
}


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codecite", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    return make_git_repo(
        tmp_path / "small",
        {
            "app/tax.py": (
                '"""Tax rules."""\nimport math\n\nRATES = {"EU": 0.2}\n\n\n'
                "def get_rate_for_region(region: str) -> float:\n"
                '    """The VAT rate of a region."""\n    return RATES.get(region, 0.0)\n\n\n'
                "def calculate_tax(amount: float, region: str) -> float:\n"
                "    return math.floor(amount * get_rate_for_region(region) * 100) / 100\n"
            ),
            "docs/guide.md": "# Guide\n\n## Tax\n\nVAT by region.\n",
        },
    )


def test_index_json_then_status_and_chunks_contract(small_repo: Path) -> None:
    proc = run("index", str(small_repo), "--wait", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert sorted(report["added"]) == ["app/tax.py", "docs/guide.md"]
    assert report["embed_pending"] == 0 and report["embedded"] == report["chunks_written"]
    assert report["edges_by_kind"].get("calls") == 1

    again = json.loads(run("index", str(small_repo), "--wait", "--json").stdout)
    assert again["changed"] == 0 and again["embedded"] == 0

    proc = run("chunks", str(small_repo / "app" / "tax.py"), "--json")
    assert proc.returncode == 0, proc.stderr
    chunks = json.loads(proc.stdout)["chunks"]
    assert all(set(c) >= CHUNK_FIELDS for c in chunks)
    assert [(c["kind"], c["qualname"], c["start_line"], c["end_line"]) for c in chunks] == [
        ("module", "app.tax", 1, 4),
        ("function", "get_rate_for_region", 7, 9),
        ("function", "calculate_tax", 12, 13),
    ]
    status = json.loads(run("status", "--json", cwd=small_repo).stdout)
    assert status["chunks"] == report["chunks_written"] and status["stale_files"] == 0
    (small_repo / "app" / "tax.py").write_text("def other():\n    pass\n")
    status = json.loads(run("status", str(small_repo), "--json").stdout)
    assert status["modified"] == ["app/tax.py"]


def test_human_output_has_summary_tables(small_repo: Path) -> None:
    proc = run("index", str(small_repo), "--no-embed")
    assert proc.returncode == 0, proc.stderr
    for words in ("Files by language", "Chunks by kind", "Skipped by reason", "Time"):
        assert words in proc.stdout
    dry = run("index", str(small_repo), "--dry-run", "--full")
    assert dry.returncode == 0 and "Would embed about" in dry.stdout
    status = run("status", str(small_repo))
    assert "embedded" in status.stdout and "0 (0%)" in status.stdout


@pytest.mark.parametrize(
    "make_target, message",
    [
        (lambda tmp: tmp / "missing", "no such folder"),
        (lambda tmp: (tmp / "f.py").write_text("x = 1\n") and tmp / "f.py", "is a file"),
    ],
)
def test_bad_paths_are_user_errors(tmp_path: Path, make_target, message: str) -> None:
    proc = run("index", str(make_target(tmp_path)))
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_missing_index_and_bad_usage(tmp_path: Path) -> None:
    proc = run("status", cwd=tmp_path)
    assert proc.returncode == 1 and "codecite index" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("index", "--no-such-flag")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    proc = run("chunks", str(tmp_path / "nope.py"), cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_empty_folder_and_bad_config(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run("index", str(empty), "--json")  # nothing to index: a user error (issue 39)
    assert proc.returncode == 1 and json.loads(proc.stdout)["files_seen"] == 0
    assert "nothing to index" in proc.stderr
    (empty / "codecite.toml").write_text("max_file_bytes = 'lots'\n")
    proc = run("index", str(empty))
    assert proc.returncode == 1 and "max_file_bytes" in proc.stderr


@pytest.mark.slow
def test_kill_9_during_indexing_is_repaired_by_next_run(tmp_path: Path) -> None:
    files = {
        f"pkg/mod_{i}.py": "\n\n".join(
            f'def handler_{i}_{j}(order, amount):\n    """Handle step {j} of flow {i}."""\n'
            f"    return amount * {j} + len(order)"
            for j in range(12)
        )
        for i in range(20)
    }
    repo = make_git_repo(tmp_path / "big", files)
    db_path = repo / ".codecite" / "index.db"
    env = {
        "CODECITE_EMBED_COMMIT_EVERY": "16",
        "CODECITE_EMBED_BATCH_SIZE": "16",
        "CODECITE_CACHE_DIR": str(tmp_path / "fresh-cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "index", str(repo), "--wait", "--json"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    vectors = 0
    while time.time() < deadline and proc.poll() is None:
        if db_path.exists():
            try:
                con = sqlite3.connect(db_path, timeout=1)
                vectors = con.execute("SELECT count(*) FROM vectors").fetchone()[0]
                con.close()
            except sqlite3.Error:
                vectors = 0
            if vectors > 0:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "indexing finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(db_path)
    chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    done = con.execute("SELECT count(*) FROM vectors").fetchone()[0]
    con.close()
    assert 0 < done < chunks  # killed part-way through embedding; keyword index complete
    result = run("index", str(repo), "--wait", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["changed"] == 0 and report["embed_pending"] == 0
    assert report["rechunked"] is False  # the files were all cut before the kill
    assert report["embedded"] == chunks - done
    con = sqlite3.connect(db_path)
    assert con.execute("SELECT count(*) FROM vectors").fetchone()[0] == chunks


@pytest.mark.slow
def test_kill_9_during_parsing_leaves_a_repairable_index(tmp_path: Path) -> None:
    files = {f"src/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(400)}
    repo = make_git_repo(tmp_path / "many", files)
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "index", str(repo), "--no-embed"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db_path = repo / ".codecite" / "index.db"
    deadline = time.time() + 60
    while time.time() < deadline and not db_path.exists():
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    result = run("index", str(repo), "--no-embed", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    con = sqlite3.connect(db_path)
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 400
    assert con.execute("SELECT count(DISTINCT path) FROM chunks").fetchone()[0] == 400
    # every file has exactly its own chunk once: nothing half-written survived
    assert con.execute("SELECT count(*) FROM chunks").fetchone()[0] == 400
    assert report["files_seen"] == 400


def test_ask_extractive_json_and_abstention(small_repo: Path) -> None:
    assert run("index", str(small_repo), "--wait").returncode == 0
    proc = run(
        "ask",
        "how is the VAT rate of a region computed",
        str(small_repo),
        "--json",
        "--llm",
        "extractive",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"question", "answer", "citations", "sources", "insufficient", "llm"}
    assert data["llm"] == "extractive" and not data["insufficient"]
    assert data["citations"] and all(c["verified"] for c in data["citations"])
    assert "app/tax.py:" in data["answer"]
    proc = run(
        "ask",
        "how do we render the mobile onboarding carousel",
        str(small_repo),
        "--json",
        "--llm",
        "extractive",
    )
    data = json.loads(proc.stdout)
    assert data["insufficient"] and "not enough information" in data["answer"].lower()
    human = run(
        "ask", "how is the VAT rate of a region computed", str(small_repo), "--llm", "extractive"
    )
    assert human.returncode == 0 and human.stdout.startswith("get_rate_for_region")
    marks = [ln.strip() for ln in human.stdout.splitlines() if ln.strip()[:1] in ("✓", "✗")]
    assert marks and all(m.startswith("✓ ") for m in marks)
    same = run(
        "ask", "how is the VAT rate of a region computed", str(small_repo), "--llm", "extractive",
        "--json",
    )  # fmt: skip
    assert len(marks) == len(json.loads(same.stdout)["blocks"])  # one mark per block
    assert "Confidence: " in human.stdout


def test_ask_bad_llm_choices_are_user_errors(small_repo: Path) -> None:
    assert run("index", str(small_repo), "--no-embed").returncode == 0
    proc = run("ask", "tax", str(small_repo), "--llm", "gpt9")
    assert proc.returncode == 1 and "choose one of" in proc.stderr
    proc = run(
        "ask",
        "tax",
        str(small_repo),
        "--llm",
        "openai:some-model",
        "--base-url",
        "http://127.0.0.1:9/v1",
        env={"CODECITE_LLM_MAX_RETRIES": "0"},
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "extractive" in proc.stderr  # the message says what to do instead


def test_ask_prints_the_further_places_after_the_blocks(tmp_path: Path) -> None:
    """The sentences after an extractive answer's blocks (here: the other places that
    raise the exception that leads, each cited) are printed, as --json gives them."""
    repo = make_git_repo(
        tmp_path / "quota",
        {
            "store/errors.py": (
                "class QuotaExceeded(Exception):\n"
                '    """Raised when an upload would take an account over its storage quota."""\n'
            ),
            "store/upload.py": (
                "from store.errors import QuotaExceeded\n\n\n"
                "def save_upload(account, blob):\n"
                "    if account.used + len(blob) > account.quota:\n"
                "        raise QuotaExceeded(account.name)\n"
                "    account.used += len(blob)\n\n\n"
                "def copy_upload(account, source):\n"
                "    if account.used + source.size > account.quota:\n"
                "        raise QuotaExceeded(account.name)\n"
                "    account.used += source.size\n"
            ),
        },
    )
    assert run("index", str(repo), "--wait").returncode == 0
    question = "What is QuotaExceeded?"
    data = json.loads(run("ask", question, str(repo), "--llm", "extractive", "--json").stdout)
    assert data["lead"].startswith("`QuotaExceeded` (store/errors.py:1")
    assert data["notes"] and "is raised by" in data["notes"][0]
    human = run("ask", question, str(repo), "--llm", "extractive")
    assert human.returncode == 0, human.stderr
    (line,) = [ln for ln in human.stdout.splitlines() if ln.startswith("See also:")]
    assert "QuotaExceeded is raised by" in line and "(store/upload.py:" in line


def test_the_terminal_shows_code_as_written_and_no_control_character_acts() -> None:
    """A code line in the terminal: backslashes as the source has them (a regex, a
    "\\n" in a string), tabs as spaces (Go), while an escape sequence, a bidi override
    and rich markup written in the repository are shown, never acted on."""
    from rich.console import Console

    from codecite.cli.answer import _shown

    line = '\tpattern := regexp.MustCompile(`\\d+\\n`) // "\x1b[2J" \u202e [bold]x[/bold]'
    console = Console(record=True, width=200, color_system=None)
    console.print(_shown(line), soft_wrap=True, highlight=False)
    printed = console.export_text().rstrip("\n")
    assert printed == (
        '    pattern := regexp.MustCompile(`\\d+\\n`) // "\\x1b[2J" \\u202e [bold]x[/bold]'
    )
