"""Signed, expiring tokens and who may do what (PROTOCOL.md "Connecting"; DESIGN.md roles).

A token is ``base64url(json claims) + "." + base64url(HMAC-SHA256(secret, claims part))``.
Claims: ``role``, ``sub`` (who), ``exp`` (unix seconds), optional ``tables`` (a dealer's
tables) and ``player`` (a player's own account).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROLES = ("player", "dealer", "cashier", "seller", "member_in_charge", "auditor", "ops")
SECRET_FILE = "secret"


class AuthError(Exception):
    """A token that is missing, malformed, forged or expired."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """Who is connected, as their token says."""

    role: str
    sub: str
    exp: int
    tables: tuple[str, ...] = ()
    player: str | None = None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


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
    """Sign a token for ``role`` that expires ``ttl_seconds`` after ``now``."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    claims: dict[str, Any] = {"role": role, "sub": sub, "exp": now + ttl_seconds}
    if tables:
        claims["tables"] = list(tables)
    if player is not None:
        claims["player"] = player
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    sig = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
    return f"{body}.{sig}"


def verify(secret: bytes, token: str, *, now: int) -> Principal:
    """The principal a valid token names; AuthError for anything else."""
    try:
        body, sig = token.split(".")
        expected = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(sig, expected):
            raise AuthError("bad signature")
        claims = json.loads(_unb64(body))
        role, sub, exp = claims["role"], claims["sub"], claims["exp"]
        tables = tuple(claims.get("tables", ()))
        player = claims.get("player")
    except AuthError:
        raise
    except (ValueError, KeyError, TypeError) as e:
        raise AuthError("malformed token") from e
    if role not in ROLES or not isinstance(sub, str) or not isinstance(exp, int):
        raise AuthError("malformed token")
    if exp <= now:
        raise AuthError("token expired")
    return Principal(role=role, sub=sub, exp=exp, tables=tables, player=player)


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


# Who may do what.

READ_ALL = frozenset({"auditor", "ops"})
TABLE_OPS = frozenset(
    {"open_round", "no_more_bets", "record_outcome", "draw_outcome", "close_table"}
)
CAGE_OPS = frozenset({"buy_chips", "cash_out"})
MERCHANDISE_OPS = frozenset({"add_stock"})
"""A merchandise wheel's shelf is restocked by a member in charge (4620.10(e))."""
RAFFLE_SELLER_OPS = frozenset({"sell_ticket", "register_purchaser"})
"""Sellers sell raffle tickets (at the door, or online for a registered purchaser)."""
RAFFLE_MIC_OPS = frozenset(
    {
        "setup_raffle",
        "record_drawing_method",
        "close_sales",
        "hold_drawing",
        "reveal_card",
        "try_key",
        "erase_purchaser",
        "load_self_exclusions",
    }
)
"""The member in charge sets raffles up, draws, reveals cards, tries keys and keeps the
purchaser data (erasure, the self-exclusion list); a member in charge may register a
purchaser too."""
RAFFLE_READERS = frozenset({"auditor", "ops", "member_in_charge", "seller", "player"})
"""Who may read a raffle's stream: its board, drawings and prizes are public to players;
its events carry no personal data."""


def may_read(p: Principal, stream: str) -> bool:
    """Auditors and ops read everything; dealers their tables; cashiers the cage; players
    and members in charge any table (the layout is public at the table) but not the cage
    or the log; raffles are read by :data:`RAFFLE_READERS`."""
    if p.role in READ_ALL:
        return True
    if stream.startswith("table:"):
        table = stream.removeprefix("table:")
        if p.role == "dealer":
            return table in p.tables
        return p.role in ("player", "member_in_charge")
    if stream == "cage":
        return p.role == "cashier"
    if stream.startswith("raffle:"):
        return p.role in RAFFLE_READERS
    return False


def authorize(p: Principal, op: str, table: str | None, player: str | None) -> str | None:
    """Why ``p`` may not send ``op`` (a message), or None when it may."""
    if op in TABLE_OPS:
        if p.role != "dealer":
            return f"{op} is for the table's dealer"
        if table not in p.tables:
            return f"you are not a dealer of {table}"
        return None
    if op in ("place_bet", "cancel_bet"):
        if p.role == "dealer":
            return None if table in p.tables else f"you are not a dealer of {table}"
        if p.role == "player":
            if p.player is None or (player is not None and player != p.player):
                return "a player bets only for their own account"
            return None
        return f"{op} is for players and the table's dealer"
    if op in CAGE_OPS:
        return None if p.role == "cashier" else f"{op} is for cashiers"
    if op in MERCHANDISE_OPS:
        return None if p.role == "member_in_charge" else f"{op} is for a member in charge"
    if op == "register_purchaser":
        if p.role in ("seller", "member_in_charge"):
            return None
        return f"{op} is for sellers and the member in charge"
    if op in RAFFLE_SELLER_OPS:
        return None if p.role == "seller" else f"{op} is for sellers"
    if op in RAFFLE_MIC_OPS:
        return None if p.role == "member_in_charge" else f"{op} is for the member in charge"
    return f"{op} is not allowed for {p.role}"
