"""The rules of tokens and web sessions (DESIGN.md §11): their form, the stored hash,
the checks of user names and repository globs, and :class:`TokenInfo`.

A token reads ``cc_<id>_<secret>``: ``id`` is a short random lookup key (stored as
is), ``secret`` 256 random bits (only a salted hash is stored). The plaintext is
returned once, by :meth:`codecite.server.state.StateStore.create_token`.

Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass

from ...errors import ConfigError, UserError
from ..auth import Principal

#: Why a token was refused (:meth:`~codecite.server.state.StateStore.check_token`); "ok"
#: when it was not.
REASONS = ("ok", "missing", "malformed", "unknown", "revoked", "expired")
#: ``cc_`` + 12 hex characters + ``_`` + the url-safe secret.
TOKEN_RE = re.compile(r"cc_(?P<id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{32,128})")
USER_RE = re.compile(r"(?!-)[A-Za-z0-9._@-]{1,128}")
GLOB_RE = re.compile(r"[A-Za-z0-9._*?\[\]!-]{1,128}")
ID_BYTES = 6
ID_ATTEMPTS = 5
SECRET_BYTES = 32
#: PBKDF2-HMAC-SHA256 rounds for new tokens (kept per row, so it can change later).
KDF_ROUNDS = 1_000
KDF = f"pbkdf2_sha256:{KDF_ROUNDS}"


def parse_token(token: str) -> tuple[str, str] | None:
    """``(id, secret)`` of a well-formed token, else None."""
    m = TOKEN_RE.fullmatch(token)
    return (m.group("id"), m.group("secret")) if m else None


def hash_secret(secret: str, salt: bytes, kdf: str) -> bytes:
    """The stored form of a secret: PBKDF2-HMAC-SHA256 with a per-token 16-byte salt.

    The cost is deliberately low (1,000 rounds, well under a millisecond). Stretching
    protects *guessable* secrets (passwords) against offline guessing; these secrets
    are 256 bits from :func:`secrets.token_urlsafe`, so a stolen database still needs
    ~2**255 guesses per token whatever the cost, while every API request pays it. The
    salt keeps equal secrets from having equal hashes. ``kdf`` ("pbkdf2_sha256:N") is
    stored with each row, so the cost can change without invalidating tokens.
    """
    name, _, rounds = kdf.partition(":")
    if name != "pbkdf2_sha256" or not rounds.isdigit():
        raise ConfigError(f"token hash {kdf!r} is unknown to this codecite; upgrade codecite")
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, int(rounds))


#: Hashed for an unknown id, so "no such id" takes as long as "wrong secret".
DUMMY_SALT = secrets.token_bytes(16)


def principal_of(
    user: str, repos: str, admin: int, expires_at: float | None, revoked_at: float | None
) -> tuple[Principal | None, str]:
    """A token row's principal and "ok", or None and "revoked" / "expired"."""
    if revoked_at is not None:
        return None, "revoked"
    if expires_at is not None and expires_at <= time.time():
        return None, "expired"
    return Principal(user, tuple(json.loads(repos)), bool(admin)), "ok"


#: A web session id: ``cs_`` + 256 random bits, url-safe.
SESSION_PREFIX = "cs_"
SESSION_RE = re.compile(r"cs_[A-Za-z0-9_-]{32,128}")


def session_hash(session: str) -> str:
    """The stored form of a session id (256 random bits: a plain hash is enough)."""
    return hashlib.sha256(session.encode()).hexdigest()


def check_user(user: str) -> str:
    if not USER_RE.fullmatch(user):
        raise UserError(f"user name {user!r}: use letters, digits, . _ - @ (not starting with -)")
    return user


def check_globs(repos: list[str]) -> tuple[str, ...]:
    globs = tuple(dict.fromkeys(g.strip() for g in repos))
    if not globs or not all(globs):
        raise UserError("give at least one repository glob (e.g. --repos shop,payments or '*')")
    for glob in globs:
        if not GLOB_RE.fullmatch(glob):
            raise UserError(
                f"repository glob {glob!r}: use repository names with * ? [...] "
                "(e.g. shop, shop*, '*')"
            )
    return globs


@dataclass(frozen=True)
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    user: str
    repos: tuple[str, ...]
    admin: bool
    created_at: float
    expires_at: float | None
    revoked_at: float | None

    def status(self, now: float | None = None) -> str:
        """``active``, ``revoked`` or ``expired``."""
        if self.revoked_at is not None:
            return "revoked"
        now = time.time() if now is None else now
        return "expired" if self.expires_at is not None and self.expires_at <= now else "active"
