"""Raffle ops at the gateway (services/gateway/protocol.py, auth.py): who may send them,
who may read a raffle, and how each op's fields are checked before any actor sees it."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.auth import Principal, may_read
from services.gateway.ops import authorize, parse_command
from services.gateway.protocol import ProtocolError, fingerprint
from services.raffles.state import HoldDrawing, RevealCard, SellTicket, SetupRaffle, TryKey

ROLES = ("player", "dealer", "cashier", "seller", "member_in_charge", "auditor", "ops")
SELLER = Principal(role="seller", sub="s", exp=0)
MIC = Principal(role="member_in_charge", sub="m", exp=0)
NOW = 1_795_000_000_000


def who(role: str) -> Principal:
    return Principal(role=role, sub=role, exp=0, tables=("roulette-1",), player="p-1")


@pytest.mark.parametrize(
    ("op", "allowed"),
    [
        ("sell_ticket", {"seller"}),
        ("register_purchaser", {"seller", "member_in_charge"}),
        *(
            (op, {"member_in_charge"})
            for op in (
                "setup_raffle",
                "record_drawing_method",
                "close_sales",
                "hold_drawing",
                "reveal_card",
                "try_key",
                "erase_purchaser",
                "load_self_exclusions",
            )
        ),
    ],
)
def test_who_may_send_each_raffle_op(op: str, allowed: set[str]) -> None:
    for role in ROLES:
        assert (authorize(who(role), op, None, None) is None) == (role in allowed), role


def test_who_may_read_a_raffle() -> None:
    readers = {role for role in ROLES if may_read(who(role), "raffle:qoh-1")}
    assert readers == {"player", "seller", "member_in_charge", "auditor", "ops"}


def parse(msg: dict[str, Any], principal: Principal = SELLER) -> Any:
    full = {"id": "c-1", "raffle": "qoh-1", **msg}
    return parse_command(
        full, principal, set(), {"qoh-1"}, now_ms=NOW, organization="Org", occasion="night-1"
    )


def test_a_door_sale_is_stamped_with_the_clock_and_the_nights_occasion() -> None:
    parsed = parse({"op": "sell_ticket", "amount": 600, "count": 3, "serial": 40})
    assert parsed.stream == "raffle:qoh-1" and parsed.key == "seller:s/c-1"
    assert parsed.command == SellTicket(
        count=3, amount=600, now_ms=NOW, serial=40, occasion="night-1", online=None
    )


def test_an_online_sale_carries_its_purchaser_and_location_for_the_gateway() -> None:
    where = {"state": "NY", "lat": 42.1, "lon": -73.9}
    parsed = parse(
        {
            "op": "sell_ticket",
            "amount": 100,
            "channel": "online",
            "purchaser": "pu_1",
            "location": where,
        }
    )
    online = parsed.command.online
    assert online.purchaser == "pu_1" and online.location_state == "NY"
    assert online.account is None and parsed.location == where
    assert parsed.command.occasion is None  # an online sale counts toward no night by default


def test_the_fingerprint_keeps_only_the_reported_state() -> None:
    """The position is personal data: it never reaches the stored command results."""
    base = {"op": "sell_ticket", "raffle": "q", "amount": 100, "channel": "online"}
    here = fingerprint({**base, "location": {"state": "NY", "lat": 42.1}})
    there = fingerprint({**base, "location": {"state": "NY", "lat": 40.7}})
    away = fingerprint({**base, "location": {"state": "NJ", "lat": 40.7}})
    assert here == there != away


def test_each_op_builds_its_command() -> None:
    setup = parse(
        {"op": "setup_raffle", "raffle": "new-1", "kind": "queen_of_hearts",
         "config": {"first_drawing_at": "2026-12-04T19:00:00-05:00", "board": "server"}},
        MIC,
    )  # fmt: skip
    assert isinstance(setup.command, SetupRaffle)
    assert setup.command.config["first_drawing_at"] == 1_796_428_800_000
    assert setup.command.config["organization"] == "Org"
    hand = parse({"op": "hold_drawing", "serials": [3, 9], "keys": [1, 2]}, MIC).command
    assert hand == HoldDrawing(now_ms=NOW, draws=None, serials=(3, 9), keys=(1, 2))
    reveal = parse({"op": "reveal_card", "position": 17, "card": "QH"}, MIC).command
    assert reveal == RevealCard(now_ms=NOW, position=17, card="QH")
    key = parse({"op": "try_key", "key": 4, "opened": False}, MIC).command
    assert key == TryKey(now_ms=NOW, key=4, opened=False)


@pytest.mark.parametrize(
    ("msg", "code"),
    [
        ({"op": "sell_ticket", "raffle": "nope", "amount": 100}, "unknown_raffle"),
        ({"op": "sell_ticket", "amount": 0}, "bad_request"),
        ({"op": "sell_ticket", "amount": 100, "count": 1.5}, "bad_request"),
        ({"op": "sell_ticket", "amount": 100, "count": 1001}, "bad_request"),
        ({"op": "sell_ticket", "amount": 100, "serial": 0}, "bad_request"),
        ({"op": "sell_ticket", "amount": 100, "channel": "phone"}, "bad_request"),
        ({"op": "sell_ticket", "amount": 100, "channel": "online", "purchaser": "p"},
         "bad_request"),
        (
            {"op": "sell_ticket", "amount": 100, "channel": "online", "purchaser": "p",
             "location": {"state": "NY", "pad": "x" * 3000}},
            "bad_request",
        ),
        ({"op": "sell_ticket", "amount": 100, "occasion": ""}, "bad_request"),
        ({"op": "hold_drawing", "serials": [0]}, "forbidden"),
    ],
)  # fmt: skip
def test_bad_fields_are_refused_before_any_actor(msg: dict[str, Any], code: str) -> None:
    with pytest.raises(ProtocolError) as e:
        parse(msg)
    assert e.value.code == code


@pytest.mark.parametrize(
    "msg",
    [
        {"op": "setup_raffle", "raffle": "Bad Id", "kind": "standard", "config": {}},
        {"op": "setup_raffle", "raffle": "ok-1", "kind": "standard", "config": []},
        {"op": "reveal_card", "position": "5"},
        {"op": "reveal_card", "position": 5.5},
        {"op": "reveal_card", "position": 5, "card": 12},
        {"op": "try_key", "key": 1, "opened": "yes"},
        {"op": "hold_drawing", "serials": ["3"]},
        {"op": "record_drawing_method", "method": "rng"},
    ],
)
def test_bad_member_in_charge_fields_are_bad_request(msg: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as e:
        parse(msg, MIC)
    assert e.value.code == "bad_request"


@pytest.mark.parametrize("position", [0, 55, -1, 2**40])
def test_a_position_off_the_board_is_invalid_position(position: int) -> None:
    """A Queen of Hearts board has positions 1 to 54 (4620.23(b)(3)): any other whole
    number is ``invalid_position``, as docs/PROTOCOL.md says, not ``bad_request``."""
    with pytest.raises(ProtocolError) as e:
        parse({"op": "reveal_card", "position": position}, MIC)
    assert e.value.code == "invalid_position"


def test_a_board_with_its_own_commitments_is_refused_at_setup() -> None:
    msg = {
        "op": "setup_raffle",
        "raffle": "q-9",
        "kind": "queen_of_hearts",
        "config": {"board": {"mode": "server", "commitments": ["0" * 64] * 54}},
    }
    with pytest.raises(ProtocolError) as e:
        parse(msg, MIC)
    assert e.value.code == "invalid_config"
