"""The server's state database: tokens (salted hashes, expiry, revocation), the
append-only audit log, and the ``token``/``audit`` commands — real SQLite in
tmp_path and a real PostgreSQL (tests/pg.py; those cases skip without one), real CLI
processes, and one real ``codecite serve`` on a PostgreSQL state database."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from repos import free_port, make_git_repo, run_cli, start_server

from codecite.errors import ConfigError, UserError
from codecite.server.auth import Principal
from codecite.server.config import load_server_config
from codecite.server.state import TOKEN_RE, AuditRecord, BaseStateStore, StateStore, open_state
from codecite.server.state import tokens as state_mod

DAY = 86_400.0
#: A GitHub-token-shaped string, built here so the file holds no literal one.
GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 4 + "E5f6"


def write_config(tmp_path: Path, state: Path | str = "state.db") -> Path:
    path = tmp_path / "codecite-server.toml"
    path.write_text(f'state = "{state}"\n[repos.shop]\npath = "{tmp_path.as_posix()}"\n')
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where the test's state database is: a SQLite file, or a new PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return tmp_path / "state.db"


@pytest.fixture
def store(location: Path | str) -> Iterator[BaseStateStore]:
    with open_state(location) as s:
        yield s


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path)


@pytest.fixture
def any_config(tmp_path: Path, location: Path | str) -> Path:
    """A server configuration whose ``state`` is the test's state database."""
    return write_config(tmp_path, location if isinstance(location, str) else "state.db")


def raw_bytes(location: Path | str) -> bytes:
    """Everything stored: the SQLite file and its WAL as on disk, or every state row."""
    if isinstance(location, Path):
        files = (location, Path(f"{location}-wal"))
        return b"".join(p.read_bytes() for p in files if p.exists())
    import psycopg

    with psycopg.connect(location) as conn:
        rows = conn.execute(
            "SELECT t::text FROM codecite_state.tokens t UNION ALL "
            "SELECT a::text FROM codecite_state.audit a UNION ALL "
            "SELECT s::text FROM codecite_state.sessions s UNION ALL "
            "SELECT encode(salt || hash, 'escape') FROM codecite_state.tokens"
        ).fetchall()
    return "\n".join(r[0] for r in rows).encode()


def record(when: float, user: str = "alice", question: str = "where is tax?") -> AuditRecord:
    return AuditRecord(
        time=when, user=user, client="curl/8", method="POST", endpoint="/api/v1/search",
        status=200, latency_ms=12.5, repos=["shop"], question=question,
        results=["shop:src/tax.py:1-20"], citations=["shop:src/tax.py:3-4"], detail="",
    )  # fmt: skip


# --- tokens ---------------------------------------------------------------------------
def test_token_create_prints_token_last_and_stores_only_a_hash(
    any_config: Path, location: Path | str
) -> None:
    proc = run_cli("token", "create", "alice", "--repos", "shop*", "--config", str(any_config))
    assert proc.returncode == 0, proc.stderr
    token = proc.stdout.strip().splitlines()[-1]
    m = TOKEN_RE.fullmatch(token)
    assert m is not None
    assert "alice" in proc.stderr and "only now" in proc.stderr
    secret = m.group("secret")
    data = raw_bytes(location)
    assert secret.encode() not in data and token.encode() not in data
    assert m.group("id").encode() in data  # the lookup key is stored as is
    with open_state(location) as s:
        assert s.authenticate(token) == Principal("alice", ("shop*",), False)


def test_check_token_says_why(store: BaseStateStore) -> None:
    token = store.create_token("alice", ["shop"])
    token_id, secret = state_mod.parse_token(token)  # type: ignore[misc]
    assert store.check_token(token) == (Principal("alice", ("shop",)), "ok")
    assert store.check_token(f"  {token}\n")[1] == "ok"  # pasted with whitespace
    wrong = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    assert store.check_token(f"cc_{token_id}_{wrong}") == (None, "unknown")
    assert store.check_token(f"cc_{'0' * 12}_{secret}") == (None, "unknown")
    for missing in (None, "", "   "):
        assert store.check_token(missing) == (None, "missing")
    for bad in ("abc", f"Bearer {token}", f"cc_{token_id}", f"cc_XYZ_{secret}", token + "!"):
        assert store.check_token(bad) == (None, "malformed"), bad
    assert store.authenticate(f"cc_{token_id}_{wrong}") is None


def test_unknown_id_costs_one_hash_like_a_wrong_secret(
    store: BaseStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = store.create_token("alice", ["*"])
    _, secret = state_mod.parse_token(token)  # type: ignore[misc]
    calls: list[str] = []
    real = state_mod.hash_secret
    monkeypatch.setattr(state_mod, "hash_secret", lambda *a: calls.append("h") or real(*a))
    store.check_token(f"cc_{'f' * 12}_{secret}")  # unknown id
    store.check_token(token[:-1] + ("x" if token[-1] != "x" else "y"))  # wrong secret
    store.check_token("cc_nothex_x")  # malformed: no lookup, no hash
    assert calls == ["h", "h"]


def test_revoked_and_expired_tokens_are_refused(store: BaseStateStore) -> None:
    expired = store.create_token("carol", ["shop"], expires_at=time.time() - 1)
    assert store.check_token(expired) == (None, "expired")
    later = store.create_token("carol", ["shop"], expires_at=time.time() + DAY)
    assert store.authenticate(later) is not None
    assert store.revoke("carol") == 1  # only the active one
    assert store.check_token(later) == (None, "revoked")
    one = store.create_token("dave", ["*"])
    other = store.create_token("dave", ["*"])
    assert store.revoke_id(one.split("_")[1]) is True
    assert store.revoke_id(one.split("_")[1]) is False
    assert store.check_token(one)[1] == "revoked" and store.check_token(other)[1] == "ok"


def test_repo_globs_and_validation(store: BaseStateStore) -> None:
    shop = store.authenticate(store.create_token("a.b-c_d@corp", ["shop*", "docs"]))
    assert shop is not None
    assert shop.readable(["shop", "shop-api", "payments", "docs"]) == ["shop", "shop-api", "docs"]
    admin = store.authenticate(store.create_token("root", ["*"], admin=True))
    assert admin is not None and admin.admin and admin.can_read("payments")
    for repos in ([], [""], ["shop, payments"], ["shop/x"]):
        with pytest.raises(UserError):
            store.create_token("alice", repos)
    for user in ("", "bad name", "-alice", "a/b", "x" * 200):
        with pytest.raises(UserError):
            store.create_token(user, ["shop"])


def test_several_tokens_per_user_and_revoke(store: BaseStateStore) -> None:
    a1, a2 = store.create_token("alice", ["shop"]), store.create_token("alice", ["*"])
    bob = store.create_token("bob", ["shop"])
    assert a1 != a2
    assert [t.user for t in store.list_tokens()] == ["alice", "alice", "bob"]
    assert len(store.list_tokens("alice")) == 2
    assert store.revoke("alice") == 2
    assert store.revoke("alice") == 0
    assert store.authenticate(a1) is None and store.authenticate(a2) is None
    assert store.authenticate(bob) is not None
    assert {t.user: t.status() for t in store.list_tokens()} == {
        "alice": "revoked",
        "bob": "active",
    }


def test_principal_for_user_joins_active_tokens(store: BaseStateStore) -> None:
    assert store.principal_for_user("alice") is None
    store.create_token("alice", ["shop", "docs*"])
    store.create_token("alice", ["docs*", "payments"], expires_at=time.time() + DAY)
    store.create_token("alice", ["*"], admin=True, expires_at=time.time() - 1)  # expired
    assert store.principal_for_user("alice") == Principal(
        "alice", ("shop", "docs*", "payments"), False
    )
    store.revoke("alice")
    assert store.principal_for_user("alice") is None


# --- web sessions and Slack replays (issue 21) ---------------------------------------------
def test_a_session_is_a_hashed_id_that_ends_at_sign_out(
    store: BaseStateStore, location: Path | str
) -> None:
    token = store.create_token("alice", ["shop"])
    session = store.create_session(token, 3600)
    assert session.startswith("cs_") and token not in session
    assert store.check_session(session) == (Principal("alice", ("shop",)), "ok")
    assert session.encode() not in raw_bytes(location)  # only its hash is stored
    assert store.check_token(session) == (None, "malformed")  # no bearer token
    assert store.revoke_session(session) is True
    assert store.check_session(session) == (None, "unknown")  # a copied cookie too
    assert store.revoke_session(session) is False
    for bad in (None, "", "cs_short", token):
        assert store.check_session(bad)[0] is None


def test_a_session_ends_with_its_token_and_its_age(store: BaseStateStore) -> None:
    token = store.create_token("bob", ["*"])
    session = store.create_session(token, 3600)
    old = store.create_session(token, 0.0)
    assert store.check_session(old) == (None, "expired")
    store.revoke("bob")
    assert store.check_session(session) == (None, "revoked")
    with pytest.raises(UserError, match="revoked"):
        store.create_session(token, 3600)


def test_slack_signatures_are_remembered_across_processes(location: Path | str) -> None:
    now = time.time()
    with open_state(location) as first, open_state(location) as second:
        assert first.first_seen("v0=abc", now, 300) is True
        assert second.first_seen("v0=abc", now + 29, 300) is False  # a replay elsewhere
        assert second.first_seen("v0=def", now, 300) is True
        assert first.first_seen("v0=old", now - 1000, 300) is True
        assert first.first_seen("v0=new", now, 300) is True  # forgets the old one
        assert first.first_seen("v0=old", now, 300) is True


@pytest.mark.slow
def test_token_list_and_revoke_cli(any_config: Path, location: Path | str) -> None:
    config = any_config
    made = run_cli("token", "create", "alice", "--repos", "shop,nope", "--admin",
                   "--expires", "2h", "--config", str(config))  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "nope matches no repository" in made.stderr
    token = made.stdout.strip().splitlines()[-1]
    secret = TOKEN_RE.fullmatch(token).group("secret")  # type: ignore[union-attr]
    listed = run_cli("token", "list", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    (info,) = json.loads(listed.stdout)["tokens"]
    assert info["user"] == "alice" and info["repos"] == ["shop", "nope"] and info["admin"]
    assert info["status"] == "active" and info["id"] == token.split("_")[1]
    assert 2 * 3600 - 60 < info["expires_at"] - info["created_at"] <= 2 * 3600 + 60
    table = run_cli("token", "list", "--config", str(config))
    assert "alice" in table.stdout and info["id"] in table.stdout
    for out in (listed.stdout + listed.stderr, table.stdout + table.stderr):
        assert secret not in out and "salt" not in out and "hash" not in out
    revoked = run_cli("token", "revoke", "alice", "--config", str(config))
    assert revoked.returncode == 0 and "revoked 1 token of alice" in revoked.stdout
    again = run_cli("token", "revoke", "alice", "--config", str(config))
    assert again.returncode == 1 and "no active token" in again.stderr
    with open_state(location) as s:
        assert s.check_token(token) == (None, "revoked")


@pytest.mark.parametrize("expires", ["0d", "3y", "soon", "-1d"])
def test_token_create_rejects_bad_durations(config: Path, expires: str) -> None:
    proc = run_cli("token", "create", "alice", "--repos", "*", "--expires", expires,
                   "--config", str(config))  # fmt: skip
    assert proc.returncode == 1 and "--expires" in proc.stderr
    assert "Traceback" not in proc.stderr and not (config.parent / "state.db").exists()


def test_token_commands_need_no_server_extras(config: Path) -> None:
    """Blocked imports of fastapi/uvicorn/starlette/mcp: the commands still work."""
    code = (
        "import sys\n"
        "for name in ('fastapi', 'uvicorn', 'starlette', 'mcp'):\n"
        "    sys.modules[name] = None\n"
        f"sys.argv = ['codecite', 'token', 'create', 'eve', '--repos', '*', '--config', "
        f"{str(config)!r}]\n"
        "from codecite.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert TOKEN_RE.fullmatch(proc.stdout.strip().splitlines()[-1])


def test_state_file_is_private(tmp_path: Path) -> None:
    StateStore(tmp_path / "sub" / "state.db").close()
    assert stat.S_IMODE((tmp_path / "sub" / "state.db").stat().st_mode) == 0o600


# --- audit ----------------------------------------------------------------------------
def test_audit_append_filters_and_prune(store: BaseStateStore) -> None:
    now = time.time()
    store.audit(record(now - 100 * DAY, "alice", "old"))
    store.audit(record(now - 2 * DAY, "bob", "two days"))
    store.audit(record(now - 3600, "alice", "an hour"))
    assert [r.question for r in store.audit_rows()] == ["an hour", "two days", "old"]
    assert [r.question for r in store.audit_rows(since=now - DAY)] == ["an hour"]
    assert [r.question for r in store.audit_rows(user="alice")] == ["an hour", "old"]
    assert [r.question for r in store.audit_rows(since=now - 10 * DAY, user="bob")] == ["two days"]
    assert len(store.audit_rows(limit=1)) == 1
    row = store.audit_rows(user="bob")[0]
    assert row == record(now - 2 * DAY, "bob", "two days")
    assert store.prune_audit(0) == 0 and len(store.audit_rows()) == 3
    assert store.prune_audit(90) == 1
    assert [r.question for r in store.audit_rows()] == ["an hour", "two days"]
    with pytest.raises(ValueError, match="not code"):
        store.audit(
            AuditRecord(now, "a", "c", "GET", "/x", 200, 1.0, results=["def f():\n    pass"])
        )


def test_audit_table_is_append_only(store: BaseStateStore, location: Path | str) -> None:
    """Written around the store: no UPDATE, no DELETE of a row younger than a day (nor
    TRUNCATE in PostgreSQL); rows past a day may go (that is how pruning works)."""
    store.audit(record(time.time()))
    store.audit(record(time.time() - 2 * DAY, question="old"))
    conn: Any
    if isinstance(location, Path):
        conn = sqlite3.connect(location, isolation_level=None)  # autocommit, as psycopg's
        refused, audit = sqlite3.IntegrityError, "audit"
    else:
        import psycopg

        conn = psycopg.connect(location, autocommit=True)
        refused, audit = psycopg.errors.RestrictViolation, "codecite_state.audit"
        with pytest.raises(refused, match="append-only"):
            conn.execute(f"TRUNCATE {audit}")
    try:
        with pytest.raises(refused, match="append-only"):
            conn.execute(f"UPDATE {audit} SET question = 'changed'")
        with pytest.raises(refused, match="append-only"):
            conn.execute(f"UPDATE {audit} SET question = 'changed' WHERE question = 'old'")
        with pytest.raises(refused, match=r"append-only \(prune by age only\)"):
            conn.execute(f"DELETE FROM {audit}")
        assert conn.execute(f"DELETE FROM {audit} WHERE question = 'old'").rowcount == 1
    finally:
        conn.close()
    assert [r.question for r in store.audit_rows()] == ["where is tax?"]


def test_audit_question_is_scrubbed(store: BaseStateStore, location: Path | str) -> None:
    ours = store.create_token("alice", ["*"])
    store.audit(record(time.time(), question=f"why does {GITHUB_TOKEN} fail? also {ours}"))
    (row,) = store.audit_rows()
    assert GITHUB_TOKEN not in row.question and ours not in row.question
    assert "«redacted:github-token»" in row.question
    assert "«redacted:codecite-token»" in row.question
    store.close()
    data = raw_bytes(location)
    assert GITHUB_TOKEN.encode() not in data and ours.encode() not in data


@pytest.mark.slow
def test_audit_cli(any_config: Path, location: Path | str) -> None:
    config, now = any_config, time.time()
    with open_state(location) as s:
        s.audit(record(now - 3 * DAY, "alice", "old question"))
        s.audit(record(now - 60, "bob", f"token {GITHUB_TOKEN} leaks?"))
        s.audit(record(now - 30, "alice", "where is [bold]tax[/bold]?"))
    lines = run_cli("audit", "--config", str(config), "--json").stdout.splitlines()
    assert json.loads(lines[0])["question"] == "where is [bold]tax[/bold]?"
    assert len(lines) == 3 and GITHUB_TOKEN not in "".join(lines)
    first = json.loads(lines[0])
    assert first["results"] == ["shop:src/tax.py:1-20"] and first["status"] == 200
    since = run_cli("audit", "--config", str(config), "--since", "1d", "--user", "alice",
                    "--json")  # fmt: skip
    assert [json.loads(x)["question"] for x in since.stdout.splitlines()] == [
        "where is [bold]tax[/bold]?"
    ]
    for columns in ("200", "80"):  # a table, or two lines per request when narrow
        table = run_cli("audit", "--config", str(config), "--limit", "2", env={"COLUMNS": columns})
        assert table.returncode == 0, table.stderr
        assert "[bold]tax[/bold]" in table.stdout and "old question" not in table.stdout
        assert "/api/v1/search" in table.stdout and "bob" in table.stdout
        assert "«redacted:github-token»" in table.stdout
    bad = run_cli("audit", "--config", str(config), "--since", "yesterday")
    assert bad.returncode == 1 and "--since" in bad.stderr


# --- concurrency and damage -----------------------------------------------------------
def test_threads_share_one_store(store: BaseStateStore) -> None:
    tokens = [store.create_token(f"user{i}", ["shop"]) for i in range(4)]
    errors: list[BaseException] = []
    results: list[bool] = []

    def work(i: int) -> None:
        try:
            for n in range(40):
                results.append(store.authenticate(tokens[i]) == Principal(f"user{i}", ("shop",)))
                results.append(store.authenticate(tokens[i][:-2] + "zz") is None)
                store.audit(record(time.time(), f"user{i}", f"q{n}"))
                store.audit_rows(user=f"user{i}", limit=5)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 320 and all(results)
    assert len(store.audit_rows()) == 160
    assert {len(store.audit_rows(user=f"user{i}")) for i in range(4)} == {40}


@pytest.mark.slow
def test_damaged_state_file_is_a_clear_error(config: Path) -> None:
    db = config.parent / "state.db"
    db.write_bytes(b"this is not a database, just text\n" * 100)
    with pytest.raises(ConfigError, match="not a codecite state database"):
        StateStore(db)
    for args in (("token", "list"), ("audit",), ("token", "create", "a", "--repos", "*")):
        proc = run_cli(*args, "--config", str(config))
        assert proc.returncode == 1, proc.stderr
        assert "not a codecite state database" in proc.stderr and "Traceback" not in proc.stderr


def test_foreign_or_newer_database_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "other.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE chunks (id TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match=r"not a codecite state database.*chunks"):
        StateStore(foreign)
    newer = tmp_path / "newer.db"
    StateStore(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match="newer codecite"):
        StateStore(newer)


def test_missing_config_is_a_user_error(tmp_path: Path) -> None:
    proc = run_cli("token", "list", "--config", str(tmp_path / "nope.toml"))
    assert proc.returncode == 1 and "no such file" in proc.stderr


# --- PostgreSQL ------------------------------------------------------------------------
def test_state_url_is_not_a_path(tmp_path: Path) -> None:
    for url in ("postgresql://codecite:s3cret@db.example/codecite", "postgres://db/codecite"):
        cfg = load_server_config(write_config(tmp_path, url))
        assert cfg.state == url and isinstance(cfg.state, str)
    assert not any(tmp_path.rglob("*db*")) and not (tmp_path / "postgresql:").exists()
    relative = load_server_config(write_config(tmp_path, "sub/state.db")).state
    assert relative == (tmp_path / "sub" / "state.db").resolve()
    # a PostgreSQL store does not move the state: without `state`, it stays a file
    shared = tmp_path / "shared.toml"
    shared.write_text(f'store = "postgres://db/codecite"\n[repos.shop]\npath = "{tmp_path}"\n')
    assert load_server_config(shared).state == (tmp_path / "codecite-state.db").resolve()
    with pytest.raises(ConfigError, match="postgresql://"):
        load_server_config(write_config(tmp_path, "sqlite:///state.db"))


def test_unreachable_postgres_state_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://codecite:hunter2secret@127.0.0.1:{free_port()}/codecite"
    with pytest.raises(ConfigError, match="cannot connect to the state database") as info:
        open_state(url)
    assert "hunter2secret" not in str(info.value)
    assert "postgresql://codecite:***@127.0.0.1" in str(info.value)
    proc = run_cli("token", "list", "--config", str(write_config(tmp_path, url)))
    assert proc.returncode == 1 and "cannot connect" in proc.stderr, proc.stderr
    assert "hunter2secret" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def test_postgres_state_without_psycopg_says_what_to_install(tmp_path: Path) -> None:
    config = write_config(tmp_path, "postgresql://db.example/codecite")
    code = (
        "import sys\n"
        "for name in ('psycopg', 'psycopg_pool'):\n"
        "    sys.modules[name] = None\n"
        f"sys.argv = ['codecite', 'token', 'list', '--config', {str(config)!r}]\n"
        "from codecite.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "codecite[postgres]" in proc.stderr and "Traceback" not in proc.stderr


def test_postgres_foreign_or_newer_schema_is_refused(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA codecite_state")
        conn.execute("CREATE TABLE codecite_state.meta (key text PRIMARY KEY, value text)")
        conn.execute("INSERT INTO codecite_state.meta VALUES ('kind', 'something-else')")
    with pytest.raises(ConfigError, match=r"not a codecite state database.*meta"):
        open_state(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA codecite_state CASCADE")
    open_state(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE codecite_state.meta SET value = '99' WHERE key = 'format_version'")
    with pytest.raises(ConfigError, match="newer codecite"):
        open_state(pg_url)


def test_two_servers_on_one_postgres_see_each_others_tokens_at_once(pg_url: str) -> None:
    """Two stores on one database, as two serve processes on two machines: opened at
    once on a new database (the schema is created once), then every token, revocation
    and audit row of one is seen by the other at its next call: nothing is cached."""
    stores: list[BaseStateStore] = []
    threads = [threading.Thread(target=lambda: stores.append(open_state(pg_url))) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    one, two = stores
    try:
        token = one.create_token("alice", ["shop"])
        assert two.check_token(token) == (Principal("alice", ("shop",)), "ok")
        assert two.principal_for_user("alice") == Principal("alice", ("shop",))
        assert two.revoke("alice") == 1
        assert one.check_token(token) == (None, "revoked")
        assert one.principal_for_user("alice") is None
        other = two.create_token("bob", ["*"], admin=True)
        assert one.authenticate(other) == Principal("bob", ("*",), True)
        assert one.revoke_id(other.split("_")[1]) is True
        assert two.check_token(other) == (None, "revoked")
        assert [t.user for t in one.list_tokens()] == [t.user for t in two.list_tokens()]
        one.audit(record(time.time() - 1, "alice", "from one"))
        two.audit(record(time.time(), "bob", "from two"))
        for store in (one, two):
            assert [r.question for r in store.audit_rows()] == ["from two", "from one"]
    finally:
        one.close()
        two.close()


def test_state_shares_a_database_with_the_index(pg_url: str) -> None:
    from codecite.store.postgres import PostgresStore

    PostgresStore(pg_url, repo="shop").close()
    with open_state(pg_url) as state:
        token = state.create_token("alice", ["shop"])
    PostgresStore(pg_url, repo="shop", create=False).close()  # the index is untouched
    with open_state(pg_url) as state:
        assert state.check_token(token)[1] == "ok"


@pytest.mark.slow
def test_serve_accepts_a_cli_token_from_a_postgres_state(tmp_path: Path, pg_url: str) -> None:
    """``state = "postgresql://..."``: `codecite token create` writes the token there, a
    real `codecite serve` accepts it, a revocation by the CLI counts at the server's next
    request (no restart), and the server's audit rows are what `codecite audit` shows."""
    shop = make_git_repo(tmp_path / "shop", {"app.py": "def f():\n    return 1\n"})
    vault = make_git_repo(tmp_path / "vault", {"vault.py": "SECRET = 1\n"})
    config = tmp_path / "codecite-server.toml"
    config.write_text(
        f'listen = "127.0.0.1:0"\nauth = "token"\nstate = "{pg_url}"\n'
        f'[repos.shop]\npath = "{shop}"\n[repos.vault]\npath = "{vault}"\n'
    )
    made = run_cli("token", "create", "alice", "--repos", "shop", "--config", str(config))
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    port = free_port()
    process = start_server(config, port, tmp_path / "server.log")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            auth = {"Authorization": f"Bearer {token}"}
            listed = http.get("/api/v1/repos", headers=auth)
            assert listed.status_code == 200, listed.text
            assert [r["name"] for r in listed.json()["repos"]] == ["shop"]
            assert http.get("/api/v1/repos").status_code == 401
            revoked = run_cli("token", "revoke", "alice", "--config", str(config))
            assert revoked.returncode == 0, revoked.stderr
            assert http.get("/api/v1/repos", headers=auth).status_code == 401
    finally:
        process.terminate()
        process.wait(30)
    assert not list(tmp_path.glob("*.db")) and not list(tmp_path.glob("postgres*"))
    audit = run_cli("audit", "--config", str(config), "--json")
    assert audit.returncode == 0, audit.stderr
    rows = [json.loads(line) for line in audit.stdout.splitlines()]
    assert [r["status"] for r in rows if r["endpoint"] == "/api/v1/repos"] == [401, 401, 200]
    assert rows[-1]["user"] == "alice" and rows[-1]["client"]


@pytest.mark.slow
def test_migrate_copies_a_state_file_into_postgres(tmp_path: Path, pg_url: str) -> None:
    """`codecite migrate --from codecite-state.db --to URL`: every token keeps working
    (revoked and expired ones stay refused), the audit log arrives whole, and a second
    run copies nothing twice."""
    path = tmp_path / "codecite-state.db"
    with StateStore(path) as old:
        alice = old.create_token("alice", ["shop*"], admin=True)
        bob = old.create_token("bob", ["*"])
        gone = old.create_token("carol", ["shop"])
        stale = old.create_token("dave", ["shop"], expires_at=time.time() - 10)
        old.revoke("carol")
        for n in range(3):
            old.audit(record(time.time() - n, "alice", f"question {n}"))
        wanted = old.audit_rows()
    proc = run_cli("migrate", "--from", str(path), "--to", pg_url)
    assert proc.returncode == 0, proc.stderr
    assert "copied 4 of 4 tokens (0 already there) and 3 of 3 audit rows" in proc.stdout
    with open_state(pg_url) as new:
        assert new.authenticate(alice) == Principal("alice", ("shop*",), True)
        assert new.authenticate(bob) == Principal("bob", ("*",), False)
        assert new.check_token(gone) == (None, "revoked")
        assert new.check_token(stale) == (None, "expired")
        assert new.audit_rows() == wanted
        new.create_token("erin", ["shop"])  # made after the move: kept by a second run
    again = run_cli("migrate", "--from", str(path), "--to", pg_url, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {
        "tokens": 4, "tokens_copied": 0, "audit_rows": 3, "audit_rows_copied": 0,
    }  # fmt: skip
    with open_state(pg_url) as new:
        assert len(new.list_tokens()) == 5 and len(new.audit_rows()) == 3
    bad = run_cli("migrate", "--from", str(path), "--to", str(tmp_path / "other.db"))
    assert bad.returncode != 0 and "postgresql://" in bad.stderr


def test_the_audit_logs_token_mark_is_the_scrubbers() -> None:
    """The audit log marks a codecite token as the scrubber marks a secret of its kind."""
    from codecite.scrub import token
    from codecite.server.state.audit import TOKEN_MARK, clean

    assert token("codecite-token") == TOKEN_MARK
    assert clean(f"why is cc_{'a' * 12}_{'b' * 43} refused") == f"why is {TOKEN_MARK} refused"
