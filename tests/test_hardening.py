"""Regression tests for the failures a hostile QA pass found (issue: hardening).
Real files, real git repositories, real processes; each failed before its fix."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from repos import copy_index, git, make_git_repo, run_cli

import codecite
from codecite.store.sqlite import SQLiteStore

#: real processes: kill -9, read-only mounts, damaged files (run by .ci/run)
pytestmark = pytest.mark.slow

TAX = (
    '"""Tax rules."""\nimport math\n\nRATES = {"EU": 0.2}\n\n\n'
    "def get_rate_for_region(region: str) -> float:\n"
    '    """The VAT rate of a region."""\n    return RATES.get(region, 0.0)\n\n\n'
    "def calculate_tax(amount: float, region: str) -> float:\n"
    "    return math.floor(amount * get_rate_for_region(region) * 100) / 100\n\n\n"
    "def session(user: str) -> str:\n"
    '    """Open a session for a user."""\n    return user\n'
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_git_repo(
        tmp_path / "repo", {"app/tax.py": TAX, "docs/guide.md": "# Guide\n\nVAT by region.\n"}
    )


@pytest.fixture(scope="module")
def indexed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``repo`` indexed by the CLI once per module; each test gets a copy (``indexed``)."""
    root = make_git_repo(
        tmp_path_factory.mktemp("hardening") / "repo",
        {"app/tax.py": TAX, "docs/guide.md": "# Guide\n\nVAT by region.\n"},
    )
    proc = run_cli("index", str(root), "--wait")
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def indexed(indexed_once: Path, tmp_path: Path) -> Path:
    return copy_index(indexed_once, tmp_path / "repo")


def _paths(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0, proc.stderr
    return [r["path"] for r in json.loads(proc.stdout)["results"]]


# --- 1. search while a first index is embedding, and after kill -9 -------------------
def _count_vectors(db_path: Path) -> int:
    try:
        con = sqlite3.connect(db_path, timeout=1)
        try:
            return int(con.execute("SELECT count(*) FROM vectors").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_search_and_ask_work_during_a_first_embedding_and_after_kill_9(tmp_path: Path) -> None:
    files = {
        f"pkg/mod_{i}.py": "\n\n".join(
            f'def handler_{i}_{j}(order, amount):\n    """Handle step {j} of flow {i}."""\n'
            f"    return amount * {j} + len(order)"
            for j in range(12)
        )
        for i in range(20)
    }
    big = make_git_repo(tmp_path / "big", files)
    db_path = big / ".codecite" / "index.db"
    env = {
        "CODECITE_EMBED_COMMIT_EVERY": "16",
        "CODECITE_EMBED_BATCH_SIZE": "16",
        "CODECITE_CACHE_DIR": str(tmp_path / "fresh-cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "index", str(big), "--wait"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and _count_vectors(db_path) == 0:
        time.sleep(0.05)
    assert proc.poll() is None, "indexing finished before the first vectors were seen"
    during = run_cli("search", "handle step of flow", str(big), "--json", env=env)
    assert during.returncode == 0, during.stderr
    assert json.loads(during.stdout)["results"]
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for args in (
        ("search", "handle step 3 of flow 7", str(big), "--json"),
        ("ask", "how is step 3 of flow 7 handled", str(big), "--json"),
    ):
        after = run_cli(*args, env=env)
        assert after.returncode == 0, after.stderr
        assert "could not broadcast" not in after.stderr
    assert any(
        p.startswith("pkg/")
        for p in _paths(run_cli("search", "handle step 3 of flow 7", str(big), "--json", env=env))
    )


def test_vector_matrix_needs_no_recorded_dimension(tmp_path: Path) -> None:
    """The database fallback reads the width from the stored vectors themselves."""
    with codecite.open_index(make_git_repo(tmp_path / "r", {"a.py": TAX})) as index:
        index.update(embed=False)
        chunks = list(index.chunks())
        import numpy as np

        with index.store.transaction():
            index.store.put_vectors(chunks[:2], np.ones((2, 384), dtype=np.float32))
        ids, matrix = index.store.vector_matrix()
    assert matrix.shape == (2, 384) and len(ids) == 2


# --- 2. no file outside the repository through a symlinked folder ----------------------
def test_a_tracked_folder_replaced_by_a_symlink_outside_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:outsidemarker:/root:/bin/bash\n")
    (outside / "settings.ini").write_text("[db]\nhost = outsidemarker\n")
    repo = make_git_repo(
        tmp_path / "repo",
        {
            "app.py": "def main():\n    return 1\n",
            "conf/passwd": "tracked: a harmless file\n",
            "conf/settings.ini": "[db]\nhost = localhost\n",
        },
    )
    shutil.rmtree(repo / "conf")
    (repo / "conf").symlink_to(outside)
    (repo / "linked.py").symlink_to(outside / "passwd")  # an untracked file symlink too
    proc = run_cli("index", str(repo), "--no-embed", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert skipped["conf/passwd"] == "symlink" and skipped["conf/settings.ini"] == "symlink"
    assert skipped.get("linked.py") == "symlink"
    assert report["added"] == ["app.py"]
    found = run_cli("search", "outsidemarker", str(repo), "--json")
    assert all(not p.startswith("conf/") for p in _paths(found))
    assert b"outsidemarker" not in (repo / ".codecite" / "index.db").read_bytes()


# --- 3. long lines are not stored once per definition ---------------------------------
def _bundle(tmp_path: Path, line_bytes: int, default_excludes: bool) -> Path:
    functions = "".join(f"function f{i}(a){{return a+{i};}}" for i in range(line_bytes // 30))
    # ordinary code first: the walker's minified check reads only the first 8 KB
    head = "".join(f"function start{i}(x) {{\n  return x + {i};\n}}\n" for i in range(400))
    text = "// app bundle\n" + head + functions + "\n"
    files = {"web/bundle.js": text, "web/app.js": "function ok() {\n  return 1;\n}\n"}
    if not default_excludes:
        files["codecite.toml"] = "default_excludes = false\n"
    return make_git_repo(tmp_path / f"bundle{int(default_excludes)}", files)


def test_a_long_line_later_in_a_file_is_treated_as_minified(tmp_path: Path) -> None:
    repo = _bundle(tmp_path, 20_000, default_excludes=True)
    with codecite.open_index(repo) as index:
        report = index.update(embed=False)
        stored = sum(len(c.content) for c in index.chunks())
    assert ("web/bundle.js", "minified") in {(s.path, s.reason) for s in report.skipped}
    assert stored < 100


def test_without_default_excludes_a_long_line_is_stored_linearly(tmp_path: Path) -> None:
    repo = _bundle(tmp_path, 80_000, default_excludes=False)
    size = len((repo / "web" / "bundle.js").read_text())
    with codecite.open_index(repo) as index:
        index.update(embed=False)
        stored = sum(len(c.content) for c in index.chunks("web/bundle.js"))
    assert 0 < stored <= 2 * size


# --- 4. a file name that is not UTF-8 --------------------------------------------------
@pytest.mark.parametrize("use_git", [True, False])
def test_an_undecodable_file_name_is_skipped_not_fatal(tmp_path: Path, use_git: bool) -> None:
    repo = tmp_path / "names"
    repo.mkdir()
    (repo / "good.py").write_text("def fine():\n    return 1\n")
    with open(os.path.join(os.fsencode(repo), b"bad\xff.py"), "w") as fh:
        fh.write("def hidden():\n    return 2\n")
    if use_git:
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "names")
    proc = run_cli("index", str(repo), "--no-embed", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["added"] == ["good.py"]
    assert {
        "path": "bad\\xff.py",
        "reason": "bad-name",
        "detail": "the file name is not valid UTF-8",
    } in report["skipped"]
    human = run_cli("index", str(repo), "--no-embed")
    assert human.returncode == 0, human.stderr


# --- 5. one writer at a time ------------------------------------------------------------
def _open_store(folder: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait()
    SQLiteStore(folder).close()


def test_concurrent_opens_of_a_new_index_create_it_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for round_ in range(3):
        folder = str(tmp_path / f"idx{round_}")
        barrier = ctx.Barrier(4)
        procs = [ctx.Process(target=_open_store, args=(folder, barrier)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]


def test_two_indexers_at_once_do_the_work_once(repo: Path, tmp_path: Path) -> None:
    env = {**os.environ, "CODECITE_CACHE_DIR": str(tmp_path / "cold-cache")}
    cmd = [sys.executable, "-m", "codecite", "index", str(repo), "--wait", "--json"]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e.decode() for _, e in outs]
    reports = [json.loads(o) for o, _ in outs]
    chunks = max(r["chunks_written"] for r in reports)
    assert sum(r["embedded"] for r in reports) == chunks
    assert sorted(r["chunks_written"] for r in reports) == [0, chunks]
    assert any("waiting" in e.decode() for _, e in outs)


# --- 6. batch input: a bad line gets an error, the rest go on ---------------------------
def test_batch_bad_lines_get_errors_and_the_rest_go_on(indexed: Path, tmp_path: Path) -> None:
    lines = [
        b'{"id": "inf", "query": "tax", "k": 1e999}',
        b'{"id": "bytes", "query": "tax \xff\xfe"}',
        b'{"id": "neg", "query": "tax", "k": -3}',
        b"not json",
        b'{"id": "ok", "query": "vat rate of a region", "k": 2}',
    ]
    batch = tmp_path / "q.jsonl"
    batch.write_bytes(b"\n".join(lines) + b"\n")
    proc = run_cli("search", "--batch", str(batch), str(indexed))
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["inf", None, "neg", None, "ok"]
    assert [("error" in o) for o in out] == [True, True, True, True, False]
    assert "k" in out[0]["error"] and "UTF-8" in out[1]["error"] and out[2]["results"] == []
    assert out[1]["line"] == 2 and 0 < len(out[4]["results"]) <= 2
    piped = run_cli("search", "--batch", "-", str(indexed), stdin=batch.read_bytes())
    assert piped.stdout == proc.stdout


# --- 7. a read-only index answers queries ------------------------------------------------
def _read_only(path: Path) -> tuple[str, ...]:
    """A command prefix that runs a process with ``path`` mounted read-only."""
    prefix = (
        "unshare",
        "-rm",
        "sh",
        "-c",
        f'mount --bind -o ro "{path}" "{path}" && exec "$@"',
        "sh",
    )
    probe = subprocess.run([*prefix, "touch", str(path / ".probe")], capture_output=True)
    if shutil.which("unshare") is None or b"Read-only" not in probe.stderr:
        pytest.skip("needs `unshare -rm` to mount a folder read-only")
    return prefix


def test_queries_work_on_a_read_only_index(indexed: Path) -> None:
    prefix = _read_only(indexed)
    for args in (
        ("search", "vat rate", str(indexed), "--json"),
        ("ask", "how is the vat rate of a region found", str(indexed), "--json"),
        ("status", str(indexed), "--json"),
        ("chunks", str(indexed / "app" / "tax.py"), "--json"),
        ("search", "vat rate", "--index", str(indexed / ".codecite"), "--json"),
    ):
        proc = run_cli(*args, prefix=prefix)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "readonly" not in proc.stderr
    assert "app/tax.py" in _paths(
        run_cli("search", "vat rate", str(indexed), "--json", prefix=prefix)
    )
    # A reader of a writable index leaves index.db-wal/-shm behind: SQLite then opens
    # the mounted copy without complaint, and the writer lock's file is what fails.
    assert run_cli("search", "vat rate", str(indexed), "--json").returncode == 0
    assert (indexed / ".codecite" / "index.db-shm").exists()
    tax = indexed / "app" / "tax.py"
    tax.write_text(tax.read_text() + "\n# edited\n")
    edited = run_cli("search", "vat rate", str(indexed), "--json", prefix=prefix)
    assert edited.returncode == 0, edited.stderr  # cannot re-index it here: marked stale
    results = json.loads(edited.stdout)["results"]
    assert any(r["stale"] for r in results if r["path"] == "app/tax.py"), results
    index_again = run_cli("index", str(indexed), prefix=prefix)
    # a user error (exit 1, issue 21 item 9: it was exit 2, "Permission denied:
    # index.lock") that says what to do
    assert index_again.returncode == 1, index_again.stderr
    assert "internal error" not in index_again.stderr
    assert "cannot write the index" in index_again.stderr and "--index DIR" in index_again.stderr


def test_a_read_only_index_says_once_that_its_query_log_is_not_written(
    indexed: Path, tmp_path: Path
) -> None:
    """Issue 39: every search of a read-only index printed "cannot append to the query
    log"; a process says it once per index."""
    prefix = _read_only(indexed)
    batch = tmp_path / "questions.jsonl"
    batch.write_text("".join(json.dumps({"query": q}) + "\n" for q in ("vat", "rate", "region")))
    proc = run_cli("search", "--batch", str(batch), str(indexed), prefix=prefix)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 3
    assert proc.stderr.count("cannot append to the query log") == 1, proc.stderr
    assert "query_log = false" in proc.stderr


# --- 8. an index folder that holds the user's files -------------------------------------
def test_an_index_folder_holding_source_files_is_refused(repo: Path) -> None:
    proc = run_cli("index", str(repo), "--index", str(repo / "app"))
    assert proc.returncode == 1 and "tax.py" in proc.stderr and "--index" in proc.stderr
    assert not (repo / "app" / ".gitignore").exists()
    assert not (repo / "app" / "index.db").exists()
    fresh = repo / "idx"
    assert run_cli("index", str(repo), "--no-embed", "--index", str(fresh)).returncode == 0
    assert (fresh / ".gitignore").read_text().strip().endswith("*")
    empty = repo.parent / "empty-idx"
    empty.mkdir()
    assert run_cli("index", str(repo), "--no-embed", "--index", str(empty)).returncode == 0
    assert not (empty / ".gitignore").exists()  # a folder we did not create


# --- 9. damaged index files ---------------------------------------------------------------
def _damage_db(folder: Path, how: str) -> None:
    db = folder / "index.db"
    for extra in ("index.db-wal", "index.db-shm"):
        (folder / extra).unlink(missing_ok=True)
    if how == "garbage":
        db.write_bytes(b"this is not a database at all\n" * 500)
    elif how == "empty":
        db.write_bytes(b"")
    else:  # truncated
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 3])


@pytest.mark.parametrize("how", ["garbage", "truncated", "empty"])
def test_a_damaged_database_says_what_to_run_and_full_rebuilds(indexed: Path, how: str) -> None:
    folder = indexed / ".codecite"
    _damage_db(folder, how)
    for args in (
        ("search", "vat rate", str(indexed)),
        ("status", str(indexed)),
        ("ask", "how is the vat rate found", str(indexed)),
    ):
        proc = run_cli(*args)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert "index --full" in proc.stderr and "internal error" not in proc.stderr
    rebuilt = run_cli("index", str(indexed), "--wait", "--full", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "app/tax.py" in _paths(run_cli("search", "vat rate", str(indexed), "--json"))


@pytest.mark.parametrize(
    "target,data",
    [
        ("vectors.npy", b"garbage" * 100),
        ("vectors.ids.json", b"{not json"),
        ("vectors.ids.json", b'["a", "b"]'),
        ("vectors.npy", None),  # a valid .npy of the wrong width
    ],
)
def test_a_damaged_vectors_snapshot_falls_back_to_the_database(
    indexed: Path, target: str, data: bytes | None
) -> None:
    import numpy as np

    path = indexed / ".codecite" / target
    if data is None:
        ids = json.loads((indexed / ".codecite" / "vectors.ids.json").read_text())
        np.save(path, np.ones((len(ids), 7), dtype=np.float32))
    else:
        path.write_bytes(data)
    assert "app/tax.py" in _paths(run_cli("search", "vat rate of a region", str(indexed), "--json"))
    again = run_cli("index", str(indexed), "--wait")
    assert again.returncode == 0, again.stderr


# --- 10. a path that is not an indexed repository -----------------------------------------
def test_a_query_path_that_is_missing_or_a_file_is_an_error(indexed: Path) -> None:
    for cmd in ("search", "ask"):
        missing = run_cli(cmd, "vat", str(indexed / "nope"), cwd=indexed)
        assert missing.returncode == 1 and "no such folder" in missing.stderr
        a_file = run_cli(cmd, "vat", str(indexed / "app" / "tax.py"), cwd=indexed)
        assert a_file.returncode == 1 and "is a file" in a_file.stderr
    other = indexed.parent / "not-indexed"
    other.mkdir()
    proc = run_cli("search", "vat", str(other), cwd=indexed)
    assert proc.returncode == 1 and "no index" in proc.stderr


# --- 11. a query that starts with "-" -------------------------------------------------------
def test_a_query_starting_with_a_dash_goes_after_double_dash(indexed: Path) -> None:
    proc = run_cli("search", "--", "-session", "--json", cwd=indexed)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["query"] == "-session"
    assert data["results"][0]["qualname"] == "session"
    with_path = run_cli("search", "-k", "1", "--", "-session", str(indexed), "--json")
    assert len(json.loads(with_path.stdout)["results"]) == 1
    asked = run_cli("ask", "--", "-session", str(indexed), "--json")
    assert asked.returncode == 0 and json.loads(asked.stdout)["question"] == "-session"
    assert "--" in run_cli("search", "--help").stdout


# --- 12. a secret typed into a question is not written to the query log -------------------
def test_a_secret_in_a_question_is_scrubbed_before_the_query_log(indexed: Path) -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    for cmd in ("search", "ask"):
        proc = run_cli(cmd, f"why does login with {token} fail", str(indexed))
        assert proc.returncode == 0, proc.stderr
    log = (indexed / ".codecite" / "queries.jsonl").read_text()
    assert token not in log and log.count("redacted:github-token") >= 2


def test_a_script_without_a_main_guard_fails_fast_instead_of_hanging(tmp_path: Path) -> None:
    """Parse workers start by importing the caller's script again; one that indexes at
    import time used to wait for ever on the writer lock its parent held."""
    repo = tmp_path / "repo"
    shutil.copytree(Path(codecite.__file__).parent, repo, ignore=shutil.ignore_patterns("*.pyc"))

    def run(name: str, code: str) -> subprocess.CompletedProcess[str]:
        script = tmp_path / name
        script.write_text("import sys\nimport codecite\n" + code)
        return subprocess.run(
            [sys.executable, str(script), str(repo)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "CODECITE_WORKERS": "2"},
        )

    update = (
        "with codecite.open_index(sys.argv[1]) as index:\n"
        "    print(index.update(embed=False).files_seen)\n"
    )
    unguarded = run("index_it.py", update)
    assert unguarded.returncode != 0
    assert 'if __name__ == "__main__":' in unguarded.stderr
    guarded = run(
        "guarded.py",
        "if __name__ == '__main__':\n"
        + "".join("    " + line + "\n" for line in update.splitlines()),
    )
    assert guarded.returncode == 0, guarded.stderr
    assert int(guarded.stdout.split()[-1]) > 24
