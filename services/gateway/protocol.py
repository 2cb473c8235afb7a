"""Parsing client commands (PROTOCOL.md "Commands") into actor submissions.

Everything a client sends is checked here before it reaches an actor: shape and types
(``bad_request``), amounts (``bad_request`` for zero, negative or fractional, ``over_limit``
for amounts beyond any limit), the table (``unknown_table``) and the principal's right to
send it (``forbidden``). The game's own checks (``invalid_bet``, ``wager_not_offered``,
``over_limit``, ``bets_closed``…) run in the actor's ``decide``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.cage.rules import BuyChips, CashOut
from services.gateway.auth import Principal, authorize
from services.limits import MAX_SAFE_AMOUNT_CENTS
from services.supervisor import CAGE, table_stream
from services.tables.rules import (
    AddStock,
    CallNoMoreBets,
    CancelBet,
    CloseTable,
    DrawOutcome,
    OpenRound,
    PlaceBet,
    RecordOutcome,
)

MAX_ID_LENGTH = 128
COMMAND_OPS = frozenset(
    {
        "open_round",
        "place_bet",
        "cancel_bet",
        "no_more_bets",
        "record_outcome",
        "draw_outcome",
        "close_table",
        "buy_chips",
        "cash_out",
        "add_stock",
    }
)
STREAM_OPS = frozenset({"subscribe", "unsubscribe"})


class ProtocolError(Exception):
    """A request refused before any actor sees it; ``code`` is the stable error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedCommand:
    """A command ready for its actor: the stream, the domain command, the idempotency key
    (``<role>:<subject>/<id>``: ids are unique per client, and a client is a token's role
    and subject)."""

    op: str
    id: str
    stream: str
    command: Any
    key: str
    fingerprint: str
    table: str | None


def parse_json(text: str | bytes) -> dict[str, Any]:
    try:
        msg = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError("bad_request", "malformed JSON") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_request", "a request is one JSON object")
    return msg


def field(msg: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """A required field of the given JSON type (``bad_request`` when missing or mistyped)."""
    if name not in msg:
        raise ProtocolError("bad_request", f"missing field {name!r}")
    value = msg[name]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ProtocolError("bad_request", f"field {name!r} must be {names}")
    return value


def text_field(msg: Mapping[str, Any], name: str) -> str:
    value: str = field(msg, name, str)
    if not value or len(value) > MAX_ID_LENGTH:
        raise ProtocolError(
            "bad_request", f"field {name!r} must be 1 to {MAX_ID_LENGTH} characters"
        )
    return value


def amount_field(msg: Mapping[str, Any]) -> int:
    """A positive whole number of cents."""
    if "amount" not in msg:
        raise ProtocolError("bad_request", "missing field 'amount'")
    value = msg["amount"]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 200.0 is 200 cents; 2.5 is not a number of cents
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("bad_request", "amount must be a whole number of cents")
    if value <= 0:
        raise ProtocolError("bad_request", "amount must be positive")
    if value > MAX_SAFE_AMOUNT_CENTS:
        raise ProtocolError(
            "over_limit", f"amount is over the largest amount {MAX_SAFE_AMOUNT_CENTS}"
        )
    return value


def fingerprint(msg: Mapping[str, Any]) -> str:
    """What a command asks, without its id: a retry must ask the same."""
    body = {k: v for k, v in msg.items() if k != "id"}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def parse_command(
    msg: Mapping[str, Any], who: Principal, tables: frozenset[str] | set[str]
) -> ParsedCommand:
    """Turn a request object into a command for its actor, or raise ProtocolError."""
    op = field(msg, "op", str)
    if op not in COMMAND_OPS:
        raise ProtocolError("bad_request", f"unknown op {op!r}")
    command_id = text_field(msg, "id")
    table: str | None = None
    player: str | None = None
    command: Any
    if op in ("buy_chips", "cash_out"):
        player = text_field(msg, "player")
        stream = CAGE
    else:
        table = text_field(msg, "table")
        if table not in tables:
            raise ProtocolError("unknown_table", f"no table {table!r} tonight")
        stream = table_stream(table)
    if op == "place_bet":
        player = text_field(msg, "player")
    denied = authorize(who, op, table, player)
    if denied:
        raise ProtocolError("forbidden", denied)
    match op:
        case "open_round":
            command = OpenRound()
        case "place_bet":
            bet = field(msg, "bet", dict)
            command = PlaceBet(player=player or "", bet=bet, amount=amount_field(msg))
        case "cancel_bet":
            own = who.player if who.role == "player" else None
            command = CancelBet(bet_id=text_field(msg, "bet_id"), player=own)
        case "no_more_bets":
            command = CallNoMoreBets()
        case "record_outcome":
            command = RecordOutcome(outcome=field(msg, "outcome", dict))
        case "draw_outcome":
            command = DrawOutcome(index=-1)  # the actor's gateway draws the index
        case "close_table":
            reason = msg.get("reason", "closed by the dealer")
            if not isinstance(reason, str):
                raise ProtocolError("bad_request", "field 'reason' must be str")
            command = CloseTable(reason=reason[:200])
        case "add_stock":
            command = AddStock(items=field(msg, "items", list))
        case "buy_chips":
            command = BuyChips(player=player or "", amount=amount_field(msg))
        case _:
            command = CashOut(player=player or "", amount=amount_field(msg))
    return ParsedCommand(
        op=op,
        id=command_id,
        stream=stream,
        command=command,
        key=f"{who.role}:{who.sub}/{command_id}",
        fingerprint=fingerprint(msg),
        table=table,
    )
