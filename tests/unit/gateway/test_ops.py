"""The op registry (services/gateway/ops.py): docs/PROTOCOL.md's op tables say the same
ops, senders and fields, and what ``authorize`` and the gateway enforce is the registry's
declared access, op by op, for every role."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from services.games.single_outcome import DrawOutcome
from services.gateway.auth import ROLES, Principal
from services.gateway.ops import OP_LIST, OPS, TABLE, PlayerOrDealer, TableDealer, authorize
from services.gateway.ops import parse_command as parse
from services.gateway.protocol import STREAM_OPS, ProtocolError

PROTOCOL = Path(__file__).resolve().parents[3] / "docs" / "PROTOCOL.md"
IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")


def top_level_names(cell: str) -> set[str]:
    """The field names a fields cell gives: identifiers in backticks outside parentheses
    (what stands inside parentheses describes a field: its values, its nested keys)."""
    names: set[str] = set()
    depth = 0
    for i, part in enumerate(cell.split("`")):
        if i % 2:  # inside backticks
            if depth == 0 and IDENTIFIER.fullmatch(part):
                names.add(part)
            continue
        depth += part.count("(") - part.count(")")
    return names


def op_rows(text: str) -> dict[str, tuple[str, str]]:
    """Every row of the tables headed ``| op | who | fields |``: op -> (who, fields)."""
    rows: dict[str, tuple[str, str]] = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith("| op | who | fields |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if in_table and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            op = cells[0].strip("`")
            assert op not in rows, f"{op} has two rows"
            rows[op] = (cells[1], cells[2])
    return rows


def test_every_op_has_its_row_and_every_row_its_op() -> None:
    rows = op_rows(PROTOCOL.read_text())
    assert set(rows) - STREAM_OPS == set(OPS)


@pytest.mark.parametrize("op", [op.name for op in OP_LIST])
def test_a_row_says_who_and_which_fields_as_the_registry(op: str) -> None:
    who, fields = op_rows(PROTOCOL.read_text())[op]
    spec = OPS[op]
    assert who == spec.who
    assert top_level_names(fields) == set(spec.field_names)


def test_the_table_parser_sees_fields_outside_parentheses_only() -> None:
    cell = "`raffle`; `channel` (`door` or `online`), `location` (with `state`)"
    assert top_level_names(cell) == {"raffle", "channel", "location"}


def who(role: str, *, tables: tuple[str, ...] = ("t1",), player: str | None = "p-1") -> Principal:
    return Principal(role=role, sub=role, exp=0, tables=tables, player=player)


@pytest.mark.parametrize("op", [op.name for op in OP_LIST])
def test_authorize_allows_exactly_the_declared_roles(op: str) -> None:
    """Within its scope (the dealer's own table, the player's own account), an op is
    allowed to its declared roles and forbidden to every other role, with a message."""
    allowed = OPS[op].access.roles
    assert allowed, op
    for role in ROLES:
        denied = authorize(who(role), op, "t1", "p-1")
        if role in allowed:
            assert denied is None, (op, role)
        else:
            assert denied, (op, role)


@pytest.mark.parametrize(
    "op", [op.name for op in OP_LIST if isinstance(op.access, TableDealer | PlayerOrDealer)]
)
def test_table_ops_keep_to_their_scope(op: str) -> None:
    """A dealer only at the tables on its token; a player only for its own account."""
    assert authorize(who("dealer"), op, "t2", None) == "you are not a dealer of t2"
    if isinstance(OPS[op].access, PlayerOrDealer):
        assert authorize(who("player", player=None), op, "t1", None)
        if "player" in OPS[op].field_names:
            assert authorize(who("player"), op, "t1", "p-2")


MESSAGES = {
    "open_round": "open_round is for the table's dealer",
    "place_bet": "place_bet is for players and the table's dealer",
    "buy_chips": "buy_chips is for cashiers",
    "add_stock": "add_stock is for a member in charge",
    "sell_ticket": "sell_ticket is for sellers",
    "register_purchaser": "register_purchaser is for sellers and the member in charge",
    "hold_drawing": "hold_drawing is for the member in charge",
    "revoke_token": "revoke_token is for ops",
}


@pytest.mark.parametrize(("op", "message"), MESSAGES.items())
def test_forbidden_messages_are_kept(op: str, message: str) -> None:
    assert authorize(who("auditor"), op, "t1", "p-1") == message


def request(op: str) -> dict[str, Any]:
    """A well-formed request for ``op`` (its fields as the gateway needs them)."""
    base: dict[str, Any] = {"op": op, "id": "c-1", "table": "t1", "raffle": "r-1", "deal": "d-1"}
    extra: dict[str, dict[str, Any]] = {
        "place_bet": {"player": "p-1", "bet": {"kind": "red"}, "amount": 100},
        "cancel_bet": {"bet_id": "t1.1.2"},
        "record_outcome": {"outcome": {"pocket": "7"}},
        "add_stock": {"items": []},
        "buy_chips": {"player": "p-1", "amount": 100},
        "cash_out": {"player": "p-1", "amount": 100},
        "setup_raffle": {"kind": "standard", "config": {}},
        "record_drawing_method": {"method": "rng", "description": "a CSPRNG"},
        "sell_ticket": {"amount": 100},
        "reveal_card": {"position": 3},
        "try_key": {"key": 2, "opened": False},
    }
    return {**base, **extra.get(op, {})}


@pytest.mark.parametrize("op", [op.name for op in OP_LIST if not op.aggregate.off_stream])
def test_the_gateway_forbids_each_stream_op_to_undeclared_roles(op: str) -> None:
    """The gateway's parse (both command paths) refuses with ``forbidden`` every role the
    registry does not declare, before it looks at the op's other fields."""
    allowed = OPS[op].access.roles
    for role in ROLES:
        if role in allowed:
            continue
        with pytest.raises(ProtocolError) as e:
            parse(request(op), who(role), {"t1"}, {"r-1"}, deals={"d-1"})
        assert e.value.code == "forbidden", (op, role)


def test_a_table_op_builds_its_command_with_a_builder() -> None:
    """``draw_outcome`` is built by a builder function without drawing: the actor draws."""
    spec = OPS["draw_outcome"]
    assert spec.aggregate is TABLE
    parsed = parse(request("draw_outcome"), who("dealer"), {"t1"})
    assert isinstance(parsed.command, DrawOutcome)
    assert parsed.command.draw is None
    assert parsed.stream == "table:t1" and parsed.spec is spec


def test_cancel_bet_carries_the_sending_players_account_only() -> None:
    by_player = parse(request("cancel_bet"), who("player"), {"t1"}).command
    by_dealer = parse(request("cancel_bet"), who("dealer"), {"t1"}).command
    assert by_player.player == "p-1" and by_dealer.player is None
