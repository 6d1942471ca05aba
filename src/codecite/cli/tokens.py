"""Commands that manage the server's state database (docs/DESIGN.md §11): ``token create``,
``token list``, ``token revoke`` and ``audit``. Standard library only on the server
side (config + state): they work where the server extras are not installed (a
``postgresql://`` state needs the PostgreSQL extra)."""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import asdict
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..errors import UserError
from ._help import CLI
from ._shared import JsonOpt, app, emit_json, err, out

if TYPE_CHECKING:  # the state stores load when a command runs (start-up time)
    from rich.table import Table

    from ..server.config import ServerConfig
    from ..server.state import AuditRecord, BaseStateStore, TokenInfo

token_app = CLI(
    name="token",
    help="Create, list and revoke the bearer tokens that `codecite serve` accepts "
    "(Authorization: Bearer TOKEN). Tokens live in the `state` database named by the "
    "server's configuration file.",
    no_args_is_help=True,
)
app.add_typer(token_app, name="token")

ConfigOpt = Annotated[
    Path,
    typer.Option(
        "--config",
        "-c",
        help="The server's configuration file; its `state` setting names the database "
        "of tokens and the audit log.",
    ),
]
DEFAULT_CONFIG = Path("codecite-server.toml")
UNITS = {"s": 1.0, "m": 60.0, "h": 3_600.0, "d": 86_400.0, "w": 604_800.0}
DURATION = re.compile(r"(\d+)\s*([smhdw])")
#: Characters of a question shown in the audit table.
QUESTION_CHARS = 60
#: Console width from which ``audit`` draws a table (else two lines per request).
WIDE = 120


def parse_duration(text: str, option: str) -> float:
    """``30d``, ``12h``, ``45m``, ``2w`` (``90s``, mostly for tests) in seconds."""
    m = DURATION.fullmatch(text.strip().lower())
    if m is None or int(m.group(1)) == 0:
        raise typer.BadParameter(
            f"{text!r}: give a number and a unit, e.g. 30m, 12h, 30d, 2w", param_hint=option
        )
    return int(m.group(1)) * UNITS[m.group(2)]


def parse_since(text: str) -> float:
    """A duration back from now (``1d``) or a local date/time (``2026-11-01T09:00``)."""
    if DURATION.fullmatch(text.strip().lower()):
        return time.time() - parse_duration(text, "--since")
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: give a duration (1d, 12h, 30m, 2w) or a date (2026-11-01)",
            param_hint="--since",
        ) from None


def when(ts: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts).strftime(fmt)


#: Table columns that are never wrapped (the others fold).
NO_WRAP = frozenset({"id", "admin", "created", "expires", "status", "time", "latency"})


def _table(*columns: str) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD)
    for name in columns:
        table.add_column(name, no_wrap=name in NO_WRAP, overflow="fold", min_width=len(name))
    return table


def _open(config: Path) -> tuple[ServerConfig, BaseStateStore]:
    from ..server.config import load_server_config
    from ..server.state import open_state

    cfg = load_server_config(config)
    return cfg, open_state(cfg.state)


# --- token create ---------------------------------------------------------------
@token_app.command("create")
def create(
    name: Annotated[
        str,
        typer.Argument(help="User name: letters, digits, . _ - @ (a user may hold several)."),
    ],
    repos: Annotated[
        str,
        typer.Option(
            "--repos",
            help="Repositories the token may read, comma-separated names or globs: "
            "shop,payments or 'shop*' or '*' (all).",
        ),
    ],
    admin: Annotated[
        bool, typer.Option("--admin", help="May also run admin actions (re-index).")
    ] = False,
    expires: Annotated[
        str | None,
        typer.Option("--expires", help="Lifetime: 45m, 12h, 30d, 2w (default: never)."),
    ] = None,
    config: ConfigOpt = DEFAULT_CONFIG,
) -> None:
    """Create a token for NAME; it is printed once, as the last line of stdout.

    Scripts take the last line of stdout; notes go to stderr. Only a salted hash of
    the token is stored, so it cannot be shown again: revoke it and create another.
    """
    expires_at = None if expires is None else time.time() + parse_duration(expires, "--expires")
    globs = [g.strip() for g in repos.split(",")]
    cfg, store = _open(config)
    with store:
        token = store.create_token(name, globs, admin=admin, expires_at=expires_at)
    unmatched = [g for g in dict.fromkeys(globs) if not any(fnmatchcase(r, g) for r in cfg.repos)]
    if unmatched:
        err.print(
            f"[yellow]warning:[/yellow] {escape(', '.join(unmatched))} matches no repository "
            f"in {escape(str(cfg.source))} (known: {escape(', '.join(sorted(cfg.repos)))})"
        )
    if cfg.auth == "none":
        err.print('[yellow]warning:[/yellow] auth = "none": this server ignores tokens')
    err.print(
        f"token for [bold]{escape(name)}[/bold] (repos {escape(','.join(dict.fromkeys(globs)))}"
        f"{', admin' if admin else ''}, expires {when(expires_at)}); it is shown only now, "
        "store it safely. Use it as `Authorization: Bearer TOKEN`."
    )
    out.print(token, markup=False, highlight=False, soft_wrap=True)


# --- token list -------------------------------------------------------------------
def _token_json(info: TokenInfo, now: float) -> dict[str, Any]:
    return {**asdict(info), "repos": list(info.repos), "status": info.status(now)}


@token_app.command("list")
def list_(config: ConfigOpt = DEFAULT_CONFIG, as_json: JsonOpt = False) -> None:
    """List every token: user, id, repositories, admin, dates and status.

    Secrets are never stored, so never shown. With --json: {"tokens": [...]}.
    """
    _, store = _open(config)
    with store:
        tokens = store.list_tokens()
    now = time.time()
    if as_json:
        emit_json({"tokens": [_token_json(t, now) for t in tokens]})
        return
    if not tokens:
        err.print("no tokens yet; create one with `codecite token create NAME --repos '*'`")
        return
    table = _table("user", "id", "repos", "admin", "created", "expires", "status")
    for t in tokens:
        status = t.status(now)
        colour = "green" if status == "active" else "dim"
        table.add_row(
            escape(t.user), t.id, escape(",".join(t.repos)), "yes" if t.admin else "",
            when(t.created_at, "%Y-%m-%d"), when(t.expires_at), f"[{colour}]{status}[/{colour}]",
        )  # fmt: skip
    out.print(table)


# --- token revoke -----------------------------------------------------------------
@token_app.command("revoke")
def revoke(
    name: Annotated[
        str | None, typer.Argument(help="User whose active tokens are all revoked.")
    ] = None,
    token_id: Annotated[
        str | None,
        typer.Option("--id", help="Revoke only this token (the id from `token list`)."),
    ] = None,
    config: ConfigOpt = DEFAULT_CONFIG,
) -> None:
    """Revoke every active token of NAME, or one token with --id.

    A revoked token stops working at once, also on a running server. Revoking
    nothing is an error (exit 1).
    """
    if (name is None) == (token_id is None):
        raise UserError("give a user NAME or --id TOKEN_ID (see `codecite token list`)")
    _, store = _open(config)
    with store:
        if token_id is not None:
            if not store.revoke_id(token_id):
                raise UserError(f"no active token with id {token_id!r} (see `codecite token list`)")
            out.print(f"revoked token {escape(token_id)}")
            return
        assert name is not None
        count = store.revoke(name)
    if count == 0:
        raise UserError(f"{name!r} has no active token (see `codecite token list`)")
    out.print(f"revoked {count} token{'s' if count != 1 else ''} of {escape(name)}")


# --- audit ------------------------------------------------------------------------
def printable(text: str) -> str:
    """``text`` safe for a terminal: control and format characters (escape sequences,
    bell, backspace, bidirectional overrides) written as ``\\x1b`` / ``\\u202e``, new
    lines as ``\\n``: what someone typed into a question cannot drive the terminal."""
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _audit_row(r: AuditRecord) -> list[str]:
    full = printable(r.question)
    question = full if len(full) <= QUESTION_CHARS else full[:QUESTION_CHARS]
    return [
        when(r.time, "%Y-%m-%d %H:%M:%S"), escape(printable(r.user)),
        escape(printable(r.client)), escape(printable(f"{r.method} {r.endpoint}")),
        str(r.status), f"{r.latency_ms:,.0f} ms", escape(printable(",".join(r.repos))),
        escape(question + ("…" if question != full else ""))
        or (f"[dim]{escape(printable(r.detail))}[/dim]" if r.detail else ""),
    ]  # fmt: skip


@app.command("audit")
def audit(
    config: ConfigOpt = DEFAULT_CONFIG,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only requests since: 1d, 12h, 30m, 2w ago, or a date."),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's requests.")] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="At most this many rows (newest first).")
    ] = 1000,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per line (JSON lines) for machines.")
    ] = False,
) -> None:
    """Show the server's audit log, newest first: who asked what, with what result.

    Questions are stored with secrets redacted; results are locations
    (repo:path:start-end), never code. Rows older than `audit_retention_days` are
    pruned by the server.
    """
    start = None if since is None else parse_since(since)
    _, store = _open(config)
    with store:
        rows = store.audit_rows(since=start, user=user, limit=limit)
    if as_json:
        for row in rows:
            emit_json(asdict(row))
        return
    if not rows:
        err.print("no audit rows match")
        return
    if out.width < WIDE:  # eight columns do not fit: one or two lines per request
        for row in rows:
            *head, question = _audit_row(row)
            head[1] = f"[bold]{head[1]}[/bold]"
            out.print("  ".join(c or "-" for c in head), highlight=False)
            if question:
                out.print(f"    {question}", highlight=False)
        return
    table = _table("time", "user", "client", "endpoint", "status", "latency", "repos", "question")
    for row in rows:
        table.add_row(*_audit_row(row))
    out.print(table)
