"""The server's configuration file (docs/DESIGN.md §11, a contract)::

    # codecite-server.toml
    listen = "127.0.0.1:8765"
    auth = "token"                 # "none" is allowed only on a loopback address
    state = "codecite-state.db"    # tokens + audit log (relative to this file), or a
                                   # postgresql:// URL: e.g. the store's URL puts tokens and
                                   # audit in the same database, shared by every serve process
    store = "postgresql://codecite@db/codecite"   # optional: the shared store
                                   # (docs/DESIGN.md §13); each [repos.NAME] lives there
                                   # under NAME, re-index jobs go to the PostgreSQL job
                                   # queue (`codecite worker`)
    store_replicas = ["postgresql://codecite@replica1/codecite"]  # optional: for queries
    audit_retention_days = 90      # 0 keeps every row
    trusted_proxies = []           # addresses whose `user_header` names the user
    user_header = ""               # e.g. "X-Forwarded-User" (with trusted_proxies)
    allowed_hosts = ["codecite.example.com"]   # Host names it answers (DNS rebinding);
                                   # default: the listen address and localhost
    shutdown_seconds = 10          # SIGTERM: requests still running after this are cut
    [limits]
    max_body_bytes = 65536         # counted as the bytes arrive (chunked bodies too)
    max_k = 50
    max_question_chars = 4000      # every surface: API, web page, Slack, MCP
    max_code_lines = 2000          # one read of a file (code views, MCP read_code)
    max_code_chars = 50000
    requests_per_minute = 600      # per user; 0: no limit
    failed_auth_per_minute = 20    # per client address (behind trusted_proxies: the
                                   # X-Forwarded-For client), then its failures get 429
                                   # (valid tokens pass); 0: no limit
    [codecite]                     # any codecite.toml setting, for every repository
    llm = "extractive"
    [repos.shop]
    path = "/srv/code/shop"        # index defaults to PATH/.codecite
    [repos.payments]
    path = "/srv/code/payments"
    index = "/srv/index/payments"
    branch = "main"                # a server-owned clone kept fresh: git fetch + fast-forward
    poll_seconds = 300             # every 5 minutes (0: only on a webhook)
    webhook_secret = "$PAYMENTS_WEBHOOK_SECRET"   # POST /api/v1/repos/payments/refresh
    [slack]                        # optional: enables POST /slack/commands
    signing_secret = "..."         # or $CODECITE_SLACK_SIGNING_SECRET
    response_type = "ephemeral"    # or "in_channel": everyone in the channel sees the answer
    base_url = "https://codecite.example.com"   # citations link to the web page there
    [slack.users]                  # Slack user ID → codecite user (their tokens' repositories)
    U012AB3CD = "alice"

Relative paths are relative to the file (a URL is never a path). Without ``state``, the
state database is the file codecite-state.db, also when ``store`` is a PostgreSQL URL;
``state = "postgresql://..."`` (any PostgreSQL database, the store's included) puts the
tokens and the audit log there. Every problem is a :class:`ConfigError` that
names the file and the setting.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import Config
from ..errors import ConfigError, TooLargeError, UserError

DEFAULT_LISTEN = "127.0.0.1:8765"
SLACK_SECRET_ENV = "CODECITE_SLACK_SIGNING_SECRET"
SLACK_RESPONSE_TYPES = ("ephemeral", "in_channel")
#: Where Slack's ``response_url`` points; the answer is posted nowhere else.
SLACK_RESPONSE_URL_PREFIX = "https://hooks.slack.com/"
DEFAULT_STATE = "codecite-state.db"
AUTH_MODES = ("token", "none")
#: Repository names are used in URLs and globs: keep them simple.
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (larger requests get 413/422)."""

    max_body_bytes: int = 65_536
    max_k: int = 50
    max_question_chars: int = 4_000
    #: Lines and characters one read of a file returns at most (``/code``, the page's
    #: code view, MCP ``read_code``); a longer range is cut and says so.
    max_code_lines: int = 2_000
    max_code_chars: int = 50_000
    #: Requests per user per minute (429 beyond); 0 turns the limit off.
    requests_per_minute: int = 600
    #: Failed authentications per client address per minute before that address's
    #: further failures are refused (429, no audit row per attempt; a valid token still
    #: passes); 0 turns the throttle off.
    failed_auth_per_minute: int = 20

    def check_question(self, text: str, what: str = "question") -> str:
        """``text`` when it is a question every surface accepts: not empty, at most
        ``max_question_chars`` characters (:class:`TooLargeError` says the limit)."""
        if len(text) > self.max_question_chars:
            raise TooLargeError(
                f"the {what} is {len(text):,} characters; at most "
                f"{self.max_question_chars:,} are allowed: shorten it (for a bug report, "
                "keep the error message and the last lines of the traceback)"
            )
        if not text.strip():
            raise UserError(f"the {what} is empty; say what to look for")
        return text

    def check_name(self, text: str, what: str) -> str:
        """``text`` when a symbol name or path is short enough (:data:`MAX_NAME_CHARS`)."""
        if len(text) > MAX_NAME_CHARS:
            raise TooLargeError(
                f"the {what} is {len(text):,} characters; names and paths are at most "
                f"{MAX_NAME_CHARS:,}"
            )
        return text


#: Longest symbol name, path or glob a request may carry (as the API's own fields).
MAX_NAME_CHARS = 1_000


@dataclass(frozen=True)
class RepoConfig:
    name: str
    path: Path
    index: Path
    #: Keeping a server-owned clone fresh: the branch to follow (``git fetch`` +
    #: fast-forward), and how often to poll it (seconds; 0: only on a webhook).
    branch: str = ""
    poll_seconds: int = 0
    #: Secret of signed webhooks (``POST /api/v1/repos/{repo}/refresh``); "$NAME" reads
    #: the environment variable NAME. "" disables the webhook.
    webhook_secret: str = ""


@dataclass(frozen=True)
class SlackConfig:
    """The ``/codecite`` slash command (``[slack]``): requests are checked against the
    signing secret; a Slack user may ask only when mapped to a codecite user, and reads
    what that user's active tokens may read."""

    signing_secret: str = field(repr=False)
    #: Slack user ID (``U012AB3CD``) → codecite user name.
    users: dict[str, str] = field(default_factory=dict)
    #: "ephemeral" (only the asker sees the answer) or "in_channel".
    response_type: str = "ephemeral"
    #: The web page's public address, for citation links in Slack ("": no links).
    base_url: str = ""
    response_url_prefix: str = SLACK_RESPONSE_URL_PREFIX


@dataclass(frozen=True)
class ServerConfig:
    source: Path
    host: str
    port: int
    auth: str
    #: The state database (tokens + audit log): a SQLite file, or a ``postgresql://``
    #: URL (:func:`codecite.server.state.open_state` opens either).
    state: Path | str
    repos: dict[str, RepoConfig]
    limits: Limits = Limits()
    audit_retention_days: int = 90
    trusted_proxies: tuple[str, ...] = ()
    user_header: str = ""
    #: codecite.toml settings applied to every repository (``[codecite]``).
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The Slack slash command, when ``[slack]`` is configured.
    slack: SlackConfig | None = None
    #: The shared PostgreSQL store (``postgresql://`` URL; "" = each repository's own
    #: SQLite index) and its read replicas (queries only).
    store: str = ""
    store_replicas: tuple[str, ...] = ()
    #: Host names (``Host`` header) the server answers; () = the listen address and
    #: the loopback names (:attr:`hosts`). ``*.example.com`` allows subdomains.
    allowed_hosts: tuple[str, ...] = ()
    #: Seconds a SIGTERM waits for running requests before the server stops anyway.
    shutdown_seconds: int = 10

    @property
    def is_loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The host names this server answers (DNS-rebinding protection)."""
        from .guards import default_hosts

        return self.allowed_hosts or default_hosts(self.host)

    def with_listen(self, host: str | None, port: int | None) -> ServerConfig:
        from dataclasses import replace

        return replace(self, host=host or self.host, port=self.port if port is None else port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split_listen(value: str, where: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"{where}: listen must be HOST:PORT (e.g. {DEFAULT_LISTEN}), got {value!r}"
        )
    return host.strip("[]"), int(port)


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be a table")
    return value


REPO_KEYS = {"path", "index", "branch", "poll_seconds", "webhook_secret"}


def _repos(data: dict[str, Any], base: Path, where: str) -> dict[str, RepoConfig]:
    repos: dict[str, RepoConfig] = {}
    for name, spec in _table(data, "repos", where).items():
        if not REPO_NAME.match(name):
            raise ConfigError(f"{where}: repository name {name!r}: use letters, digits, . _ -")
        if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
            raise ConfigError(f'{where}: [repos.{name}] needs path = "/path/to/repo"')
        unknown = set(spec) - REPO_KEYS
        if unknown:
            raise ConfigError(f"{where}: [repos.{name}]: unknown setting(s) {sorted(unknown)}")
        path = (base / Path(spec["path"]).expanduser()).resolve()
        index = spec.get("index")
        index_dir = (base / Path(index).expanduser()).resolve() if index else path / ".codecite"
        poll = spec.get("poll_seconds", 0)
        if isinstance(poll, bool) or not isinstance(poll, int) or poll < 0:
            raise ConfigError(f"{where}: [repos.{name}] poll_seconds must be a whole number >= 0")
        secret = str(spec.get("webhook_secret", ""))
        if secret.startswith("$"):
            secret = os.environ.get(secret[1:], "")
            if not secret:
                raise ConfigError(
                    f"{where}: [repos.{name}] webhook_secret names {spec['webhook_secret']}, "
                    "which is not set in the environment"
                )
        branch = str(spec.get("branch", ""))
        if poll and not branch:
            raise ConfigError(f'{where}: [repos.{name}] poll_seconds needs branch = "main"')
        repos[name] = RepoConfig(name, path, index_dir, branch, poll, secret)
    if not repos:
        raise ConfigError(f'{where}: no repositories; add [repos.NAME] with path = "..."')
    return repos


def _limits(data: dict[str, Any], where: str) -> Limits:
    values = _table(data, "limits", where)
    known = Limits.__dataclass_fields__
    out: dict[str, int] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"{where}: [limits]: unknown setting {key!r}; known: {sorted(known)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where}: [limits] {key} must be a whole number >= 0")
        out[key] = value
    return Limits(**out)


def _slack(data: dict[str, Any], where: str) -> SlackConfig | None:
    if "slack" not in data:
        return None
    values = _table(data, "slack", where)
    known = {"signing_secret", "users", "response_type", "base_url", "response_url_prefix"}
    unknown = set(values) - known
    if unknown:
        raise ConfigError(f"{where}: [slack]: unknown setting(s) {sorted(unknown)}")
    secret = values.get("signing_secret") or os.environ.get(SLACK_SECRET_ENV, "")
    if not isinstance(secret, str) or not secret.strip():
        raise ConfigError(
            f"{where}: [slack] needs signing_secret (Slack app → Basic Information → Signing "
            f"Secret), or set ${SLACK_SECRET_ENV}"
        )
    users = _table(values, "users", f"{where}: [slack]")
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in users.items()):
        raise ConfigError(
            f'{where}: [slack.users] maps Slack user IDs to names: U012AB3CD = "alice"'
        )
    strings = {k: values.get(k, "") for k in ("response_type", "base_url", "response_url_prefix")}
    if not all(isinstance(v, str) for v in strings.values()):
        raise ConfigError(
            f"{where}: [slack] response_type, base_url and response_url_prefix are text"
        )
    response_type = strings["response_type"] or "ephemeral"
    if response_type not in SLACK_RESPONSE_TYPES:
        raise ConfigError(
            f"{where}: [slack] response_type must be one of {', '.join(SLACK_RESPONSE_TYPES)}"
        )
    return SlackConfig(
        signing_secret=secret.strip(),
        users=dict(users),
        response_type=response_type,
        base_url=strings["base_url"].rstrip("/"),
        response_url_prefix=strings["response_url_prefix"] or SLACK_RESPONSE_URL_PREFIX,
    )


KNOWN_KEYS = {
    "listen",
    "auth",
    "state",
    "repos",
    "limits",
    "codecite",
    "audit_retention_days",
    "trusted_proxies",
    "user_header",
    "slack",
    "store",
    "store_replicas",
    "allowed_hosts",
    "shutdown_seconds",
}


HOST_PATTERN = re.compile(r"^(\*|(\*\.)?[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?|[0-9a-f:.]{2,45})$")


def _allowed_hosts(data: dict[str, Any], where: str) -> tuple[str, ...]:
    hosts = data.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise ConfigError(
            f'{where}: allowed_hosts must be a list of host names: ["codecite.example.com"]'
        )
    cleaned = [h.strip().lower().strip("[]") for h in hosts]
    bad = [h for h in cleaned if not HOST_PATTERN.match(h)]
    if bad:
        raise ConfigError(
            f"{where}: allowed_hosts: {bad[0]!r} is not a host name (give names without a "
            'scheme or port, e.g. "codecite.example.com", "*.example.com" or "10.0.0.5")'
        )
    return tuple(dict.fromkeys(cleaned))


def _store(data: dict[str, Any], where: str) -> tuple[str, tuple[str, ...]]:
    from .. import is_shared_store

    store = data.get("store", "")
    if not isinstance(store, str) or (store and not is_shared_store(store)):
        raise ConfigError(f'{where}: store must be a URL: store = "postgresql://USER@HOST/DB"')
    replicas = data.get("store_replicas", [])
    if not isinstance(replicas, list) or not all(
        isinstance(r, str) and is_shared_store(r) for r in replicas
    ):
        raise ConfigError(f"{where}: store_replicas must be a list of postgresql:// URLs")
    if replicas and not store:
        raise ConfigError(f'{where}: store_replicas needs store = "postgresql://..."')
    return store, tuple(replicas)


def _state(data: dict[str, Any], base: Path, where: str) -> Path | str:
    """``state``: a ``postgresql://`` URL as given, else a file relative to ``base``."""
    from .. import is_shared_store

    value = data.get("state", DEFAULT_STATE)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f'{where}: state must be a file name (state = "{DEFAULT_STATE}") or a '
            'postgresql:// URL (state = "postgresql://USER@HOST/DB")'
        )
    if is_shared_store(value):
        return value
    if "://" in value:
        raise ConfigError(
            f"{where}: state is a {value.partition('://')[0]}:// URL; give a postgresql:// "
            "URL or a file name"
        )
    return (base / Path(value).expanduser()).resolve()


def load_server_config(path: str | Path) -> ServerConfig:
    """Read and check a server configuration file."""
    source = Path(path).expanduser().resolve()
    where = str(source)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{where}: no such file; write one (see `codecite serve --help`)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    unknown = set(data) - KNOWN_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown setting(s) {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}"
        )
    base = source.parent
    host, port = _split_listen(str(data.get("listen", DEFAULT_LISTEN)), where)
    auth = str(data.get("auth", "token"))
    if auth not in AUTH_MODES:
        raise ConfigError(f"{where}: auth must be one of {', '.join(AUTH_MODES)}, got {auth!r}")
    retention = data.get("audit_retention_days", 90)
    if isinstance(retention, bool) or not isinstance(retention, int) or retention < 0:
        raise ConfigError(f"{where}: audit_retention_days must be a whole number >= 0")
    shutdown = data.get("shutdown_seconds", 10)
    if isinstance(shutdown, bool) or not isinstance(shutdown, int) or not 1 <= shutdown <= 600:
        raise ConfigError(f"{where}: shutdown_seconds must be a whole number from 1 to 600")
    proxies = data.get("trusted_proxies", [])
    if not isinstance(proxies, list) or not all(isinstance(p, str) for p in proxies):
        raise ConfigError(f"{where}: trusted_proxies must be a list of addresses")
    overrides = _table(data, "codecite", where)
    store, replicas = _store(data, where)
    unknown_settings = set(overrides) - set(Config.field_names())
    if unknown_settings:
        raise ConfigError(f"{where}: [codecite]: unknown setting(s) {sorted(unknown_settings)}")
    return ServerConfig(
        source=source,
        host=host,
        port=port,
        auth=auth,
        state=_state(data, base, where),
        repos=_repos(data, base, where),
        limits=_limits(data, where),
        audit_retention_days=retention,
        trusted_proxies=tuple(proxies),
        user_header=str(data.get("user_header", "")),
        overrides=dict(overrides) | ({"store": store} if store else {}),
        slack=_slack(data, where),
        store=store,
        store_replicas=replicas,
        allowed_hosts=_allowed_hosts(data, where),
        shutdown_seconds=shutdown,
    )
