"""Scale-out over one PostgreSQL (docs/DESIGN.md §13), with real processes: one database (the
session's PostgreSQL, tests/pg.py), two ``codecite worker`` processes and one
``codecite serve`` whose config names ``store = "postgresql://..."``. Re-index requests
to the server become procrastinate jobs that exactly one worker runs (one job per
repository at a time, duplicates not queued twice); the server answers from the shared
store, and sees a second commit's re-index without a restart."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from repos import free_port, git, make_git_repo, run_cli, start_server

#: PostgreSQL, workers and a server in real processes (run by .ci/run)
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
VAULT = {
    "vault/launch.py": (
        '"""Zebra launch codes."""\n\n\n'
        "def zebra_launch_code(station: str) -> str:\n"
        '    """The zebra launch code of a station."""\n'
        '    return "zebra-" + station.upper()\n'
    ),
}
SECRET = "push-secret"
NEW_FILE = (
    "def quokka_ferry_schedule(port: str) -> list[str]:\n"
    '    """Departure times of the quokka ferry from a port."""\n'
    '    return ["08:00", "12:00", port]\n'
)


def _worker(url: str, name: str, log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "codecite", "worker", "--store", url, "--name", name, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )


def _wait_done(http: httpx.Client, job_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = http.get(f"/api/v1/jobs/{job_id}").json()["job"]
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish: {job}")


@pytest.fixture
def team(tmp_path: Path, pg_url: str) -> Iterator[tuple[str, Path, str, list[Path]]]:
    """(server URL, vault checkout, admin token, worker logs); the workers start later."""
    shop = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", shop)
    vault = make_git_repo(tmp_path / "vault", VAULT)
    config = tmp_path / "server.toml"
    config.write_text(
        f'listen = "127.0.0.1:0"\nstate = "state.db"\nstore = "{pg_url}"\n'
        f'[repos.shop]\npath = "{shop}"\n[repos.vault]\npath = "{vault}"\n'
        f'webhook_secret = "{SECRET}"\n'
    )
    made = run_cli("token", "create", "admin", "--repos", "*", "--admin", "--config", str(config))
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    port = free_port()
    server = start_server(config, port, tmp_path / "server.log")
    workers: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    try:
        yield f"http://127.0.0.1:{port}", vault, token, logs
    finally:
        for process in [server, *workers]:
            process.terminate()
        for process in [server, *workers]:
            process.wait(30)


def test_two_workers_and_a_server_share_one_database(
    team: tuple[str, Path, str, list[Path]], pg_url: str
) -> None:
    base, vault, token, logs = team
    headers = {"Authorization": f"Bearer {token}"}
    workers: list[subprocess.Popen[bytes]] = []
    with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
        try:
            # No worker yet: the jobs wait in the queue, and a duplicate is not queued twice.
            shop = http.post("/api/v1/repos/shop/reindex").json()["job"]
            again = http.post("/api/v1/repos/shop/reindex").json()["job"]
            vault_job = http.post("/api/v1/repos/vault/reindex").json()["job"]
            assert shop["status"] == "queued" and again["id"] == shop["id"]
            assert vault_job["id"] != shop["id"]
            not_yet = http.post("/api/v1/search", json={"query": "zebra launch code"})
            assert not_yet.status_code == 400  # nothing indexed yet

            workers = [_worker(pg_url, f"w{i + 1}", log) for i, log in enumerate(logs)]
            done = [_wait_done(http, job["id"]) for job in (shop, vault_job)]
            assert all(job["status"] == "done" for job in done), done
            assert {job["summary"]["worker"] for job in done} <= {"w1", "w2"}
            assert done[0]["summary"]["chunks_written"] > 0

            # Served from the shared store, by a server that indexed nothing itself.
            found = http.post("/api/v1/search", json={"query": "zebra launch code", "k": 5})
            assert found.status_code == 200, found.text
            results = found.json()["results"]
            assert results[0]["repo"] == "vault" and "launch.py" in results[0]["path"]
            shop_hits = http.post("/api/v1/search", json={"query": "discount", "repos": ["shop"]})
            assert shop_hits.json()["results"]

            # A commit, a second re-index from a push webhook (and one more queued behind
            # it for the same repository): picked up without restarting the server.
            (vault / "vault" / "ferry.py").write_text(NEW_FILE)
            git(vault, "add", "-A")
            git(vault, "commit", "-q", "-m", "ferry")
            body = b'{"ref": "refs/heads/main"}'
            signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            pushed = http.post(
                "/api/v1/repos/vault/refresh",
                content=body,
                headers={"X-Hub-Signature-256": signature},
            )
            assert pushed.status_code == 202, pushed.text
            second = pushed.json()["job"]  # a signed push webhook queues the job
            third = http.post("/api/v1/repos/vault/reindex", json={"full": True}).json()["job"]
            for job in (second, third):
                assert _wait_done(http, job["id"])["status"] == "done"
            ferry = http.post("/api/v1/search", json={"query": "quokka ferry schedule", "k": 3})
            assert "ferry.py" in ferry.json()["results"][0]["path"]
        finally:
            for process in workers:
                process.terminate()
            for process in workers:
                process.wait(30)

    # One job per repository at a time: no two runs of a repository overlap.
    with psycopg.connect(pg_url) as conn:
        runs = conn.execute(
            "SELECT repo, worker, started_at, finished_at FROM codecite_job_runs "
            "ORDER BY started_at"
        ).fetchall()
    assert len(runs) >= 3 and all(finished is not None for *_, finished in runs)
    for repo in ("shop", "vault"):
        spans = [(start, end) for name, _, start, end in runs if name == repo]
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
    outputs = [log.read_text(errors="replace") for log in logs]
    assert sum(out.count("re-indexing") for out in outputs) == len(runs), outputs


def test_a_reader_reloads_vectors_after_another_process_commits(
    tmp_path: Path, pg_url: str
) -> None:
    """A serving process holds nothing that goes stale: its vector snapshot reloads when
    another process's commit bumps the repository's generation in PostgreSQL."""
    import codecite

    vault = make_git_repo(tmp_path / "vault", VAULT)
    settings: dict[str, object] = {"store": pg_url, "repo_name": "vault"}
    with codecite.open_index(vault, overrides=settings) as writer:
        writer.update()
    with codecite.open_index(vault, overrides=settings, create=False) as reader:
        before = reader.searcher.tier("model")
        generation = reader.store.generation()
        assert before is not None and len(before) > 0
        (vault / "vault" / "ferry.py").write_text(NEW_FILE)
        indexed = run_cli("index", str(vault), "--wait", "--store", pg_url, "--repo-name", "vault")
        assert indexed.returncode == 0, indexed.stderr
        assert reader.store.generation() > generation
        reader.searcher.refresh()  # what each search does first
        after = reader.searcher.tier("model")
        assert after is not None and len(after) > len(before)
        hits = reader.search("quokka ferry schedule", k=3).hits
        assert hits and hits[0].chunk.path.endswith("ferry.py")


def test_the_embedding_cache_in_the_database_is_shared_across_repositories(
    tmp_path: Path, pg_url: str
) -> None:
    """With a PostgreSQL store the embedding cache lives in the database: a second
    repository with the same code (another machine's clone, a fork) computes no vector,
    even with an empty machine-wide cache."""
    import codecite

    first = make_git_repo(tmp_path / "one", VAULT)
    second = make_git_repo(tmp_path / "two", VAULT)
    with codecite.open_index(first, overrides={"store": pg_url, "repo_name": "one"}) as index:
        report = index.update()
    assert report.embed_computed > 0
    settings = {"store": pg_url, "repo_name": "two", "cache_dir": str(tmp_path / "empty")}
    with codecite.open_index(second, overrides=settings) as index:
        report = index.update()
    assert report.embedded > 0 and report.embed_computed == 0
    assert report.embed_from_cache == report.embedded
    assert not (tmp_path / "empty" / "embeddings.db").exists()  # the database's cache only
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT count(*) FROM codecite.embedding_cache").fetchone()
    assert row is not None and row[0] > 0


def test_queries_read_from_a_replica_and_writes_go_to_the_primary(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read replicas (``CODECITE_STORE_REPLICAS`` / ``store_replicas``): a read-only open
    uses the first replica that answers (a dead one is skipped), the indexer the primary.
    The "replica" is the same server under another URL (a second server costs too much
    here)."""
    import codecite
    from codecite.server.app import create_app
    from codecite.server.config import load_server_config
    from codecite.store.postgres.replicas import register_replicas, replicas_for

    replica = f"{pg_url}?connect_timeout=5"
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    monkeypatch.setenv("CODECITE_STORE_REPLICAS", f"{dead},{replica}")
    vault = make_git_repo(tmp_path / "vault", VAULT)
    settings: dict[str, object] = {"store": pg_url, "repo_name": "vault"}
    with codecite.open_index(vault, overrides=settings) as writer:
        assert writer.store.url == pg_url  # type: ignore[attr-defined]
        writer.update()
    for _ in range(2):  # round robin over [dead, replica]: the dead one is always skipped
        with codecite.open_index(vault, overrides=settings, create=False) as reader:
            assert reader.store.url == replica  # type: ignore[attr-defined]
            assert reader.store.readonly  # type: ignore[attr-defined]
            assert reader.search("zebra launch code", k=3).hits

    config = tmp_path / "server.toml"
    config.write_text(
        f'store = "{pg_url}"\nstore_replicas = ["{replica}"]\n[repos.vault]\npath = "{vault}"\n'
    )
    loaded = load_server_config(config)
    assert loaded.store_replicas == (replica,) and loaded.overrides["store"] == pg_url
    create_app(loaded)
    try:
        assert replicas_for(pg_url) == (replica,)
    finally:
        register_replicas(pg_url, ())


def test_a_job_of_a_worker_killed_mid_run_is_run_again_by_another(
    tmp_path: Path, pg_url: str
) -> None:
    """kill -9 of the worker running a re-index: once its heartbeat is old, another
    worker's upkeep task queues the job again and runs it to the end."""
    from codecite.server.config import RepoConfig
    from codecite.server.jobs import QueueJobs

    shop = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", shop)
    jobs = QueueJobs(pg_url)
    try:
        job = jobs.start(RepoConfig("shop", shop, shop / ".codecite"))
        first = _worker(pg_url, "doomed", tmp_path / "w1.log", "--stalled-after", "2")
        deadline = time.monotonic() + 30
        while (state := jobs.get(job.id)) is not None and state.status != "running":
            assert time.monotonic() < deadline, state
            time.sleep(0.05)
        first.kill()
        first.wait(10)
        second = _worker(pg_url, "rescuer", tmp_path / "w2.log", "--stalled-after", "2")
        try:
            deadline = time.monotonic() + 45
            while (state := jobs.get(job.id)) is not None and state.status != "done":
                assert time.monotonic() < deadline and state.status != "failed", state
                time.sleep(0.2)
        finally:
            second.terminate()
            second.wait(30)
        assert state is not None and state.summary["worker"] == "rescuer"
        assert "its worker died; queued again" in (tmp_path / "w2.log").read_text()
        assert state.summary["chunks_written"] > 0
    finally:
        jobs.close()
