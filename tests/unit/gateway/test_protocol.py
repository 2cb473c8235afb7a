"""What the gateway refuses before any actor sees a request (services/gateway/protocol.py):
text that is not valid Unicode, hostile nesting, numbers the store cannot hold, control
characters in ids, ``since`` out of range; and idempotency keys that cannot collide."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from services.gateway.auth import Principal
from services.gateway.ops import parse_command
from services.gateway.protocol import (
    MAX_JSON_CONTAINERS,
    MAX_JSON_DEPTH,
    MAX_SAFE_POSITION,
    ProtocolError,
    idempotency_key,
    parse_json,
    request_id,
    since_log_id,
    since_seq,
)

CASHIER = Principal(role="cashier", sub="desk", exp=0)
PLAYER = Principal(role="player", sub="p-1", exp=0, player="p-1")
SELLER = Principal(role="seller", sub="s", exp=0)
MIC = Principal(role="member_in_charge", sub="m", exp=0)
DEALER = Principal(role="dealer", sub="d", exp=0, tables=("roulette-1",))
SURROGATE = "\\ud800"
"""A lone UTF-16 surrogate as JSON writes it: valid JSON, not valid Unicode text."""


def refused(text: str) -> ProtocolError:
    with pytest.raises(ProtocolError) as e:
        parse_json(text)
    return e.value


def with_surrogate(msg: dict[str, Any], field: str) -> str:
    """``msg`` as JSON text with ``field`` (a dotted path) holding a lone surrogate."""
    *path, last = field.split(".")
    target = msg
    for part in path:
        target = target[part]
    target[last] = "MARK"
    return json.dumps(msg).replace('"MARK"', f'"x{SURROGATE}"')


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        ({"op": "buy_chips", "id": "", "player": "p-1", "amount": 100}, "id"),
        ({"op": "buy_chips", "id": "c-1", "player": "", "amount": 100}, "player"),
        ({"op": "cancel_bet", "id": "c-1", "table": "roulette-1", "bet_id": ""}, "bet_id"),
        (
            {
                "op": "record_drawing_method",
                "id": "c-1",
                "raffle": "r",
                "method": "hand",
                "description": "",
            },
            "description",
        ),
        (
            {
                "op": "sell_ticket",
                "id": "c-1",
                "raffle": "r",
                "amount": 100,
                "channel": "online",
                "purchaser": "",
                "location": {"state": "NY"},
            },
            "purchaser",
        ),
        (
            {"op": "register_purchaser", "id": "c-1", "account": {"account_number": ""}},
            "account.account_number",
        ),
        ({"op": "place_bet", "id": "c-1", "bet": {"kind": ""}}, "bet.kind"),
    ],
)
def test_a_lone_surrogate_anywhere_is_bad_request(msg: dict[str, Any], field: str) -> None:
    """Lone surrogates parse as JSON but cannot be stored: ``bad_request``, never the
    transient ``internal`` a client would retry forever."""
    error = refused(with_surrogate(msg, field))
    assert error.code == "bad_request"
    assert "Unicode" in error.message


def test_a_lone_surrogate_in_a_key_is_bad_request() -> None:
    assert refused(f'{{"op": "buy_chips", "x{SURROGATE}": 1}}').code == "bad_request"


def test_a_valid_pair_of_surrogates_is_text() -> None:
    assert parse_json('{"op": "x", "player": "\\ud83c\\udccf"}')["player"] == "\U0001f0cf"


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 200, 1_500, 100_000])
def test_deep_nesting_is_bad_request(depth: int) -> None:
    for opener, closer in (("[", "]"), ('{"a":', "}")):
        text = '{"op": "x", "bet": ' + opener * depth + "1" + closer * depth + "}"
        error = refused(text)
        assert error.code == "bad_request"
        # Past 512 brackets the width limit refuses it first, unparsed.
        limit = MAX_JSON_DEPTH if depth <= MAX_JSON_CONTAINERS else MAX_JSON_CONTAINERS
        assert str(limit) in error.message


def test_nesting_up_to_the_limit_is_accepted() -> None:
    # The request object itself is level 1.
    depth = MAX_JSON_DEPTH - 1
    text = '{"op": "x", "bet": ' + "[" * depth + "1" + "]" * depth + "}"
    assert parse_json(text)["op"] == "x"


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30])
def test_a_number_the_store_cannot_hold_is_bad_request(value: int) -> None:
    assert refused(json.dumps({"op": "x", "bet": {"n": value}})).code == "bad_request"
    assert refused(json.dumps({"op": "x", "since": value})).code == "bad_request"


def test_an_amount_beyond_the_store_is_left_to_its_own_check() -> None:
    """An amount over 2^53 - 1 is ``over_limit`` (docs/PROTOCOL.md), however large."""
    msg = {"op": "buy_chips", "id": "c-1", "player": "p-1", "amount": 10**30}
    with pytest.raises(ProtocolError) as e:
        parse_command(parse_json(json.dumps(msg)), CASHIER, set())
    assert e.value.code == "over_limit"


def test_the_largest_numbers_the_store_holds_pass() -> None:
    assert parse_json(json.dumps({"a": 2**64 - 1, "b": -(2**63)}))["a"] == 2**64 - 1


@pytest.mark.parametrize("bad", ["c\x00", "c\n1", "c\x7f", "c\x85", "\x1b[31m"])
def test_an_id_with_control_characters_is_bad_request(bad: str) -> None:
    msg = {"op": "buy_chips", "id": bad, "player": "p-1", "amount": 100}
    with pytest.raises(ProtocolError) as e:
        parse_command(msg, CASHIER, set())
    assert e.value.code == "bad_request"
    assert "control" in e.value.message
    msg = {"op": "buy_chips", "id": "c-1", "player": bad, "amount": 100}
    with pytest.raises(ProtocolError):
        parse_command(msg, CASHIER, set())


def test_ids_of_any_printable_text_are_kept() -> None:
    msg = {"op": "buy_chips", "id": "zoë/1:2 %3", "player": "p-1", "amount": 100}
    assert parse_command(msg, CASHIER, set()).id == "zoë/1:2 %3"


def test_idempotency_keys_of_different_clients_never_collide() -> None:
    """Cashier ``desk/1`` sending id ``7`` and cashier ``desk`` sending id ``1/7`` were one
    key (``cashier:desk/1/7``): the second got the first's reply, nothing written."""
    assert idempotency_key("cashier", "desk/1", "7") != idempotency_key("cashier", "desk", "1/7")
    assert idempotency_key("cashier", "a:b", "c") != idempotency_key("cashier", "a", "b:c")
    assert idempotency_key("cashier", "a%2Fb", "c") != idempotency_key("cashier", "a/b", "c")
    # Plain ids keep the key they always had: retries across the upgrade still match.
    assert idempotency_key("cashier", "desk", "c-1") == "cashier:desk/c-1"


def test_the_gateway_keys_commands_by_encoded_parts() -> None:
    first = Principal(role="cashier", sub="desk/1", exp=0)
    msg = {"op": "buy_chips", "player": "p-1", "amount": 100}
    one = parse_command({**msg, "id": "7"}, first, set())
    other = parse_command({**msg, "id": "1/7"}, CASHIER, set())
    assert one.key != other.key


@pytest.mark.parametrize("value", [0, 1, 41, MAX_SAFE_POSITION])
def test_since_seq_in_range(value: int) -> None:
    assert since_seq(value) == value


@pytest.mark.parametrize("value", [-5, -1, 2**64, MAX_SAFE_POSITION + 1, True, "3", 1.5, None])
def test_since_seq_out_of_range_is_bad_request(value: Any) -> None:
    with pytest.raises(ProtocolError) as e:
        since_seq(value)
    assert e.value.code == "bad_request"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, "0"), ("0", "0"), ("1795957549103-0", "1795957549103-0"), ("1-2", "1-2")],
)
def test_since_log_id_in_range(value: Any, expected: str) -> None:
    assert since_log_id(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        -5,
        5,
        2**64,
        "",
        "5",
        "-1",
        "1-",
        "a-1",
        "1-2-3",
        f"{2**64}-0",
        f"1-{2**70}",
        "9" * 40 + "-0",
        "١-٢",  # digits, but not ASCII ones
        True,
        [1],
    ],
)
def test_since_log_id_out_of_range_is_bad_request(value: Any) -> None:
    with pytest.raises(ProtocolError) as e:
        since_log_id(value)
    assert e.value.code == "bad_request"


def test_a_wheel_outcome_that_is_not_an_object_reaches_the_game() -> None:
    """The game says what its outcomes look like (``invalid_outcome``, docs/PROTOCOL.md):
    the gateway only requires the field."""
    msg = {"op": "record_outcome", "id": "c-1", "table": "roulette-1", "outcome": 7}
    assert parse_command(msg, DEALER, {"roulette-1"}).command.outcome == 7
    missing = {k: v for k, v in msg.items() if k != "outcome"}
    with pytest.raises(ProtocolError) as e:
        parse_command(missing, DEALER, {"roulette-1"})
    assert e.value.code == "bad_request"


@pytest.mark.parametrize(("raw", "echoed"), [("a", "a"), (7, 7), ([1], None), ({"a": 1}, None)])
def test_a_reply_echoes_only_a_string_or_number_id(raw: Any, echoed: Any) -> None:
    assert request_id({"id": raw}) == echoed


def test_a_principal_reads_at_its_rate_after_a_burst() -> None:
    """A principal's first ``burst`` messages are read at once; after that each waits its
    turn at ``rate`` a second, however many connections it reads from; an idle principal
    refills."""
    from services.gateway.transport import PrincipalSlots

    now = [100.0]
    slots = PrincipalSlots(16, rate=10.0, burst=3, clock=lambda: now[0])
    key = ("player", "p-1")
    assert [slots.reserve(key) for _ in range(3)] == [0.0, 0.0, 0.0]
    waits = [slots.reserve(key) for _ in range(3)]
    assert waits == pytest.approx([0.1, 0.2, 0.3])
    assert slots.reserve(("player", "p-2")) == 0.0  # another principal is not held up
    now[0] += 10.0
    assert slots.reserve(key) == 0.0


def test_idle_buckets_are_forgotten_only_once_refilled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``BUCKETS_KEPT`` principals the idle buckets are dropped, but one still owing
    tokens (a large view's cost, seconds of it) is kept: dropping it would forgive the
    debt."""
    from services.gateway import transport
    from services.gateway.transport import PrincipalSlots

    monkeypatch.setattr(transport, "BUCKETS_KEPT", 2)
    now = [100.0]
    slots = PrincipalSlots(16, rate=10.0, burst=3, clock=lambda: now[0])
    owing, idle = ("auditor", "a-1"), ("player", "p-1")
    slots.reserve(owing, 3 + 50)  # five seconds of debt
    slots.reserve(idle)
    now[0] += 1.0  # both idle for longer than burst / rate
    slots.reserve(("player", "p-2"))
    slots.reserve(("player", "p-3"))  # a third bucket: the idle are looked at
    assert slots.reserve(owing, 0.0) == pytest.approx(4.0)  # still owes what is left
    assert slots.reserve(idle, 0.0) == 0.0


async def test_a_principal_s_slot_is_given_back_once_however_often_it_is_called() -> None:
    """A message's slot counts while it is in flight; giving it back twice (a reply and a
    failure path both calling it) frees one slot, and frees the principal at its limit."""
    from services.gateway.transport import PrincipalSlots

    slots = PrincipalSlots(2)
    key = ("player", "p-1")
    first, second = slots.take(key), slots.take(key)
    assert slots.full(key) and slots.in_flight(key) == 2
    waiting = asyncio.ensure_future(slots.room(key))
    await asyncio.sleep(0)
    assert not waiting.done()
    first()
    first()
    await asyncio.wait_for(waiting, 1)
    assert slots.in_flight(key) == 1 and not slots.full(key)
    second()
    assert slots.in_flight(key) == 0


@pytest.mark.parametrize(
    "body",
    [
        '{"op": "x", "player": "p\ud800"}'.encode("utf-8", "surrogatepass"),  # raw, no escape
        '{"op": "x", "player": "p\ud800"}'.encode("utf-16", "surrogatepass"),
        b'{"op": "x", "player": "p\\ud800"}',
    ],
)
def test_an_http_body_with_a_lone_surrogate_in_any_encoding_is_bad_request(body: bytes) -> None:
    """``json`` reads bytes as UTF-8, -16 or -32 with ``surrogatepass``: a surrogate needs no
    escape there, and the quick scan must not let it through."""
    with pytest.raises(ProtocolError) as e:
        parse_json(body)
    assert e.value.code == "bad_request"


def test_a_plain_request_and_a_checked_one_agree() -> None:
    """The quick scan only decides whether to walk: a request it passes is one the walk
    passes too (here, every shape a command takes)."""
    for text in (
        '{"op": "place_bet", "id": "c-1", "table": "t", "player": "p", '
        '"bet": {"kind": "split", "numbers": ["17", "20"]}, "amount": 200}',
        '{"op": "buy_chips", "id": "zoë", "player": "p-1", "amount": 100}',
        '{"op": "add_stock", "id": "c", "table": "w", "items": [{"item": "a", "value": 5}]}',
    ):
        assert parse_json(text) == json.loads(text)


def test_a_utf16_body_is_checked_as_well() -> None:
    """``json`` reads UTF-16 and -32 bodies too: a number out of range hidden in one is
    refused like the same body in UTF-8."""
    msg = (
        '{"op": "buy_chips", "id": "y2", "player": "p-3", "amount": 100,'
        ' "zz": 1234567890123456789012345}'
    )
    for encoding in ("utf-16-le", "utf-16-be", "utf-32-le"):
        with pytest.raises(ProtocolError) as e:
            parse_json(msg.encode(encoding))
        assert e.value.code == "bad_request"


@pytest.mark.parametrize("raw", [float("nan"), float("inf"), -float("inf")])
def test_a_reply_never_echoes_a_number_json_cannot_hold(raw: float) -> None:
    assert request_id({"id": raw}) is None


def test_a_message_costs_one_token_per_256_bytes() -> None:
    from services.gateway.transport import message_cost

    assert message_cost("x" * 200) == 1
    assert message_cost("x" * 256) == 2
    assert message_cost(b"x" * 65_536) == 257


@pytest.mark.parametrize(
    "text",
    [
        '{"op": "nope", "a": [' + ",".join(["[]"] * 600) + "]}",
        '{"op": "nope", "a": [' + ",".join(["{}"] * 600) + "]}",
        '{"op": "nope", "a": [' + ",".join(["1"] * 5000) + "]}",
        '{"op": "nope", "description": "' + "," * 5000 + '"}',
    ],
)
def test_a_request_too_wide_is_refused_before_it_is_parsed(text: str) -> None:
    """A wide request (the largest fits 64 KiB) would cost tens of milliseconds to parse
    and check, holding every other client up: refused by counting its characters."""
    error = refused(text)
    assert error.code == "bad_request"
    assert "512 arrays and objects" in error.message
    assert refused(text.encode()).code == "bad_request"


def test_a_request_at_the_width_limit_is_parsed() -> None:
    items = ",".join(['{"item": "a", "prize": "p", "value": 5, "donated": false}'] * 100)
    assert len(parse_json('{"op": "add_stock", "items": [' + items + "]}")["items"]) == 100
