"""Signed, expiring, revocable tokens and who may do what (PROTOCOL.md "Tokens and roles").

A token is a JSON Web Token (RFC 7519) signed with HS256. Its claims: ``role``, ``sub``
(who), ``exp`` and ``iat`` (Unix seconds), ``jti`` (the token's id, random, the handle to
revoke it by), optional ``tables`` (a dealer's tables) and ``player`` (a player's own
account). The HMAC key is derived from the server secret (:func:`signing_key`).
Revocation lives in :mod:`services.gateway.revocations`.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from services.aggregates import CAGE, DEAL_SERIALS, deal_of, raffle_of, table_of
from services.derived_keys import derive_key
from services.text import name_problem

ROLES = ("player", "dealer", "cashier", "seller", "member_in_charge", "auditor", "ops")
SECRET_FILE = "secret"
ALGORITHM = "HS256"
"""The only signature algorithm minted and accepted (never ``none`` nor another one)."""
SIGNING_KEY_INFO = b"casino-night token signing key"
"""HKDF ``info`` of the token signing key: it keeps the token key apart from the other
keys derived from the same server secret (purchaser vault, Queen of Hearts boards)."""
JTI_BYTES = 16
"""Randomness of a token id: 128 bits, minted as 32 lowercase hex digits (never starting
with ``-``, so it can follow ``--revoke`` on a command line)."""
JTI_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a token id may look like when read back: 1 to 64 characters of A-Z a-z 0-9 _ -."""
REQUIRED_CLAIMS = ("role", "sub", "exp", "iat", "jti")
"""Claims every token must carry."""


class AuthError(Exception):
    """A token that is missing, malformed, forged, expired or revoked; its text is the
    stable 401 message (``no token``, ``bad signature``, ``malformed token``,
    ``token expired``, ``token revoked``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """Who is connected, as their token says."""

    role: str
    sub: str
    exp: int
    tables: tuple[str, ...] = ()
    player: str | None = None
    jti: str = ""
    """The token's id (``jti``): what ``casino-night token --revoke`` takes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IssuedToken:
    """A freshly minted token with its id and expiry (Unix seconds)."""

    token: str
    jti: str
    exp: int


def valid_jti(value: object) -> bool:
    """Whether ``value`` has the form of a token id (:data:`JTI_PATTERN`)."""
    return isinstance(value, str) and JTI_PATTERN.fullmatch(value) is not None


@functools.lru_cache(maxsize=8)
def signing_key(secret: bytes) -> bytes:
    """The 32-byte HS256 key of tokens: HKDF-SHA256 of the server secret with info
    :data:`SIGNING_KEY_INFO` (a full-length key whatever the secret's length)."""
    return derive_key(secret, SIGNING_KEY_INFO)


def issue(
    secret: bytes,
    *,
    role: str,
    sub: str,
    ttl_seconds: int,
    now: int,
    tables: tuple[str, ...] = (),
    player: str | None = None,
) -> IssuedToken:
    """Sign a token for ``role`` that expires ``ttl_seconds`` after ``now``, with a fresh
    random id. ValueError for an unknown role, a ``ttl_seconds`` under 1, or a ``sub``,
    ``player`` or table name :func:`name_problem` refuses."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    if ttl_seconds < 1:
        raise ValueError("a token must live at least one second")
    named: list[tuple[str, object]] = [("sub", sub)]
    if player is not None:
        named.append(("player", player))
    named += [("table", t) for t in tables]
    for what, value in named:
        problem = name_problem(value)
        if problem is not None:
            raise ValueError(f"{what} {value!r} {problem}")
    jti = secrets.token_hex(JTI_BYTES)
    exp = now + ttl_seconds
    claims: dict[str, Any] = {"role": role, "sub": sub, "iat": now, "exp": exp, "jti": jti}
    if tables:
        claims["tables"] = list(tables)
    if player is not None:
        claims["player"] = player
    token = jwt.encode(claims, signing_key(secret), algorithm=ALGORITHM)
    return IssuedToken(token=token, jti=jti, exp=exp)


def mint(
    secret: bytes,
    *,
    role: str,
    sub: str,
    ttl_seconds: int,
    now: int,
    tables: tuple[str, ...] = (),
    player: str | None = None,
) -> str:
    """The token text of :func:`issue` (same rules)."""
    return issue(
        secret,
        role=role,
        sub=sub,
        ttl_seconds=ttl_seconds,
        now=now,
        tables=tables,
        player=player,
    ).token


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_claims(secret: bytes, token: str) -> Principal:
    """The principal a token signed with ``secret`` names, whether or not it has expired.

    Refuses with AuthError: ``bad signature`` for a token not signed with HS256 under this
    secret (``alg`` ``none`` or any other algorithm included), ``malformed token`` for one
    that is not a JWT, lacks a required claim (:data:`REQUIRED_CLAIMS`), has a claim of
    the wrong type, an unknown role, a ``jti`` that is not a token id, or a ``sub``,
    ``player`` or table name :func:`name_problem` refuses."""
    try:
        claims = jwt.decode(
            token,
            signing_key(secret),
            algorithms=[ALGORITHM],
            # Expiry is checked by the caller against its own clock (``now``); the types
            # and the presence of every claim are checked below.
            options={
                "verify_signature": True,
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
                "verify_aud": False,
                "verify_iss": False,
                "verify_sub": False,
                "verify_jti": False,
            },
        )
    except (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError) as e:
        raise AuthError("bad signature") from e
    except (jwt.InvalidTokenError, ValueError, TypeError) as e:
        raise AuthError("malformed token") from e
    if not isinstance(claims, dict) or any(c not in claims for c in REQUIRED_CLAIMS):
        raise AuthError("malformed token")
    role, sub, exp, iat, jti = (claims[c] for c in REQUIRED_CLAIMS)
    tables = claims.get("tables", [])
    player = claims.get("player")
    if (
        role not in ROLES
        or not _is_int(exp)
        or not _is_int(iat)
        or not valid_jti(jti)
        or name_problem(sub) is not None
        or ("player" in claims and name_problem(player) is not None)
        or not isinstance(tables, list)
        or any(name_problem(t) is not None for t in tables)
    ):
        raise AuthError("malformed token")
    return Principal(role=role, sub=sub, exp=exp, tables=tuple(tables), player=player, jti=jti)


def verify(secret: bytes, token: str, *, now: int) -> Principal:
    """The principal a valid token names: :func:`read_claims`, then ``token expired``
    (AuthError) once ``now`` has reached its ``exp``. Revocation is checked by the caller
    (:class:`services.gateway.revocations.Revocations`)."""
    who = read_claims(secret, token)
    if who.exp <= now:
        raise AuthError("token expired")
    return who


def parse_ttl(text: str) -> int:
    """``90s``, ``30m``, ``12h``, ``7d`` (or plain seconds) as seconds."""
    m = re.fullmatch(r"(\d+)([smhd]?)", text.strip())
    if not m:
        raise ValueError(f"bad ttl {text!r}: use e.g. 90s, 30m, 12h, 7d")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def load_secret(data_dir: Path, *, create: bool) -> bytes:
    """``CASINO_SECRET`` when set, else the secret kept in the data directory."""
    env = os.environ.get("CASINO_SECRET")
    if env:
        return env.encode()
    path = Path(data_dir) / SECRET_FILE
    if path.exists():
        return path.read_bytes().strip()
    if not create:
        raise FileNotFoundError(
            f"no secret in {path}: start `casino-night serve` once or set CASINO_SECRET"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(32).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(value)
    return value


# Who may read what (who may send what is declared per op in services/gateway/ops.py).

READ_ALL = frozenset({"auditor", "ops"})
RAFFLE_READERS = frozenset({"auditor", "ops", "member_in_charge", "seller", "player"})
"""Who may read a raffle's stream: its board, drawings and prizes are public to players;
its events carry no personal data."""


DEAL_READERS = frozenset({"auditor", "ops", "member_in_charge", "seller"})
"""Who may read a bell jar deal's stream and its staff view: its events hold the sales and
the tickets redeemed, which a player must not learn (4620.19(c)(2)); players see the
flare only."""


def may_read(p: Principal, stream: str) -> bool:
    """Auditors and ops read everything; dealers their tables; cashiers the cage; players
    and members in charge any table (the layout is public at the table) but not the cage
    or the log; raffles are read by :data:`RAFFLE_READERS`; bell jar deals and their
    serial registry by :data:`DEAL_READERS` only."""
    if p.role in READ_ALL:
        return True
    if deal_of(stream) is not None or stream == DEAL_SERIALS:
        return p.role in DEAL_READERS
    table = table_of(stream)
    if table is not None:
        if p.role == "dealer":
            return table in p.tables
        return p.role in ("player", "member_in_charge")
    if stream == CAGE:
        return p.role == "cashier"
    if raffle_of(stream) is not None:
        return p.role in RAFFLE_READERS
    return False


MONEY_READERS = frozenset({"auditor", "ops", "cashier"})
"""Who reads every bankroll (a player reads their own, a dealer their tables' totals)."""


def may_read_bankroll(who: Principal, player: str) -> bool:
    """A player's bankroll: for auditors, ops, cashiers and that player."""
    return who.role in MONEY_READERS or (who.role == "player" and who.player == player)


CONTROL_SHEET_READERS = frozenset({"auditor", "ops", "member_in_charge"})
"""Who reads every merchandise wheel's control sheet."""


def may_read_sheet(who: Principal, table: str) -> bool:
    """A merchandise wheel's control sheet is for auditors, ops, members in charge and the
    wheel's own dealers."""
    return who.role in CONTROL_SHEET_READERS or (who.role == "dealer" and table in who.tables)
