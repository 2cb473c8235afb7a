"""The typed path (services/gateway/ops.py ``parse_frame``): a frame it takes gives the
very command the exact path (``parse_json`` then ``parse_command``) gives, fingerprint
included; every frame the exact path refuses, it leaves to the exact path. And the
fingerprint it computes is the one stored results already hold."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.auth import Principal
from services.gateway.ops import FAST_FRAME_CHARS, OPS, ParsedCommand, parse_command, parse_frame
from services.gateway.protocol import ProtocolError, fingerprint, parse_json, typed_fingerprint

TABLES = frozenset({"roulette-1", "bj-1"})
RAFFLES = frozenset({"qoh-1"})
PRINCIPALS = (
    Principal(role="player", sub="p-1", exp=0, player="p-1"),
    Principal(role="player", sub="p-2", exp=0, player="p-2"),
    Principal(role="player", sub="nobody", exp=0),
    Principal(role="dealer", sub="d", exp=0, tables=("roulette-1", "bj-1")),
    Principal(role="dealer", sub="other", exp=0, tables=("roulette-2",)),
    Principal(role="cashier", sub="desk", exp=0),
    Principal(role="member_in_charge", sub="m", exp=0),
    Principal(role="auditor", sub="a", exp=0),
)
GOOD: list[dict[str, Any]] = [
    {
        "op": "place_bet",
        "id": "b-1",
        "table": "roulette-1",
        "player": "p-1",
        "bet": {"kind": "split", "numbers": ["17", "20"]},
        "amount": 200,
    },
    {"op": "place_bet", "id": "b-2", "table": "roulette-1", "player": "p-1",
     "bet": {"kind": "column", "column": 2}, "amount": 5},
    {"op": "cancel_bet", "id": "c-1", "table": "roulette-1", "bet_id": "roulette-1.1.3"},
    {"op": "open_round", "id": "d-1", "table": "roulette-1"},
    {"op": "no_more_bets", "id": "d-2", "table": "roulette-1"},
    {"op": "record_outcome", "id": "d-3", "table": "roulette-1",
     "outcome": {"pocket": "17", "spun_from": "5"}},
    {"op": "draw_outcome", "id": "d-4", "table": "roulette-1"},
    {"op": "close_table", "id": "d-5", "table": "roulette-1"},
    {"op": "close_table", "id": "d-6", "table": "roulette-1", "reason": "done"},
    {"op": "void_round", "id": "m-1", "table": "roulette-1", "reason": "misdeal"},
    {"op": "add_stock", "id": "m-2", "table": "roulette-1",
     "items": [{"item": "mug-1", "prize": "small", "value": 450, "donated": False}]},
    {"op": "deal", "id": "d-7", "table": "bj-1"},
    {"op": "act", "id": "a-1", "table": "bj-1", "hand": "1", "action": "hit"},
    {"op": "insure", "id": "a-2", "table": "bj-1", "hand": "1", "amount": 50},
    {"op": "peek", "id": "d-8", "table": "bj-1", "natural": True, "hole": "KS"},
    {"op": "enter_cards", "id": "d-9", "table": "bj-1", "cards": ["AS", "KD"]},
    {"op": "shuffle", "id": "d-10", "table": "bj-1"},
    {"op": "burn_card", "id": "d-11", "table": "bj-1", "card": "2C"},
    {"op": "buy_chips", "id": "c-2", "player": "p-1", "amount": 1000},
    {"op": "cash_out", "id": "c-3", "player": "p-1", "amount": 10},
    {"op": "close_sales", "id": "m-3", "raffle": "qoh-1"},
    {"op": "record_drawing_method", "id": "m-4", "raffle": "qoh-1", "method": "hand",
     "description": "a drum"},
    {"op": "try_key", "id": "m-5", "raffle": "qoh-1", "key": 3, "opened": False},
    {"op": "setup_raffle", "id": "m-6", "raffle": "r-new", "kind": "standard",
     "config": {"name": "Spring raffle", "price": 100}},
]  # fmt: skip
"""A well-formed request of every op the typed decoder reads (and some it does not)."""

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**53 - 1, 2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 200.0, 2.5, 1e16, -0.0]),
    st.text(max_size=6),
    st.sampled_from(["", "x", "p-1", "roulette-1", "hit", "a\x7fb", "zoë", "x" * 129, "\x85"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
ESCAPES = ("\\ud800", "\\u0000", "\\u001f", "\\n", "\\u007f", "\\u00e9", "\\ud83c\\udccf")


def exact(text: str, who: Principal) -> ParsedCommand | str:
    """What the exact path makes of a frame: its command, or its refusal's code."""
    try:
        msg = parse_json(text)
        return parse_command(msg, who, TABLES, RAFFLES, now_ms=7, organization="o", occasion="n")
    except ProtocolError as e:
        return e.code


def typed(text: str, who: Principal) -> ParsedCommand | None:
    return parse_frame(text, who, TABLES, RAFFLES, now_ms=7, organization="o", occasion="n")


def agree(text: str, who: Principal) -> None:
    fast = typed(text, who)
    if fast is not None:
        assert fast == exact(text, who), text


def sender(msg: dict[str, Any]) -> Principal:
    """A principal who may send ``msg``."""
    return next(p for p in PRINCIPALS if exact(json.dumps(msg), p) != "forbidden")


@st.composite
def frames(draw: st.DrawFn) -> tuple[str, Principal]:
    """A request frame and its sender: a good one (its own sender, or any), changed in a
    few ways a client might get wrong."""
    msg = dict(draw(st.sampled_from(GOOD)))
    who = sender(msg) if draw(st.booleans()) else draw(st.sampled_from(PRINCIPALS))
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["value", "drop", "add", "op", "nest", "name"]))
        key = draw(st.sampled_from(sorted(msg)))
        if change == "value":
            msg[key] = draw(JSON)
        elif change == "drop":
            msg.pop(key, None)
        elif change == "add":
            msg[draw(st.sampled_from(["x", "reason", "natural", "hole", "id", "player"]))] = draw(
                JSON
            )
        elif change == "op":
            msg["op"] = draw(st.sampled_from([*OPS, "subscribe", "nope", ""]))
        elif change == "nest" and isinstance(msg.get(key), dict | list):
            msg[key] = [msg[key]] if draw(st.booleans()) else {"a": {"b": msg[key]}}
        elif change == "name":
            msg[key] = draw(st.sampled_from(["roulette-2", "craps-9", "p-2", "qoh-2", "r-new"]))
    keys = list(msg)
    random.Random(draw(st.integers(0, 2**16))).shuffle(keys)
    text = json.dumps(
        {k: msg[k] for k in keys},
        ensure_ascii=draw(st.booleans()),
        separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])),
    )
    if draw(st.booleans()):
        # An escape where a text stood (a lone surrogate, a control character...).
        text = text.replace('"p-1"', f'"p{draw(st.sampled_from(ESCAPES))}1"', 1)
    return text, who


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(frames())
def test_the_typed_path_gives_the_exact_paths_command_or_none(
    frame: tuple[str, Principal],
) -> None:
    agree(*frame)


@pytest.mark.parametrize("msg", GOOD, ids=lambda m: str(m["op"]))
def test_well_formed_commands_take_the_typed_path(msg: dict[str, Any]) -> None:
    """Every op the registry types is read by the typed decoder, compact or spaced, in any
    key order; the command is the exact path's."""
    who = sender(msg)
    for text in (json.dumps(msg), json.dumps(dict(reversed(msg.items())), indent=1)):
        command = exact(text, who)
        if msg["op"] == "setup_raffle":
            continue  # its config is checked by the raffle's rules: either path
        assert isinstance(command, ParsedCommand)
        assert typed(text, who) == command


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"amount": 100.5}, "bad_request"),
        ({"amount": 10**30}, "over_limit"),
        ({"amount": 2**53}, "over_limit"),
        ({"amount": 0}, "bad_request"),
        ({"amount": True}, "bad_request"),
        ({"table": 7}, "bad_request"),
        ({"table": "craps-9"}, "unknown_table"),
        ({"player": "p-2"}, "forbidden"),
        ({"player": "p\x00"}, "bad_request"),
        ({"id": ""}, "bad_request"),
        ({"id": "x" * 129}, "bad_request"),
        ({"id": "c\x85"}, "bad_request"),
        ({"bet": ["straight", "17"]}, "bad_request"),
        ({"bet": {"kind": "straight", "n": 2**64}}, "bad_request"),
    ],
)
def test_refusals_are_left_to_the_exact_path(change: dict[str, Any], code: str) -> None:
    text = json.dumps({**GOOD[0], **change})
    assert typed(text, PRINCIPALS[0]) is None
    assert exact(text, PRINCIPALS[0]) == code


def test_frames_the_exact_path_reads_otherwise_are_left_to_it() -> None:
    """200.0 cents is 200, an unknown field is kept in the fingerprint, a frame longer
    than the width check's reach is counted first: all through the exact path."""
    who = PRINCIPALS[0]
    for text in (
        json.dumps({**GOOD[0], "amount": 200.0}),
        json.dumps({**GOOD[0], "note": "x"}),
        json.dumps(GOOD[0]) + " " * FAST_FRAME_CHARS,
        json.dumps(GOOD[0]).replace('"p-1"', '"p\\ud800"'),
    ):
        assert typed(text, who) is None
        agree(text, who)
    spaced = json.dumps(GOOD[0]) + " " * FAST_FRAME_CHARS
    assert exact(spaced, who) == typed(json.dumps(GOOD[0]), who)  # one command either way


# The fingerprint: the value stored results hold, however it is computed.

PINNED = (
    GOOD[0],
    hashlib.sha256(
        b'{"amount":200,"bet":{"kind":"split","numbers":["17","20"]},"op":"place_bet",'
        b'"player":"p-1","table":"roulette-1"}'
    ).hexdigest(),
)


def test_the_fingerprint_of_a_bet_is_the_one_stored_before() -> None:
    """A retry spanning the upgrade matches the fingerprint its first try stored: the
    SHA-256 of the canonical JSON without ``id``, as before."""
    msg, stored = PINNED
    assert fingerprint(msg) == stored
    parsed = typed(json.dumps(msg), PRINCIPALS[0])
    assert parsed is not None and parsed.fingerprint == stored


def test_another_key_order_or_whitespace_is_the_same_command_another_content_is_not() -> None:
    msg = GOOD[0]
    one = typed(json.dumps(msg, separators=(",", ":")), PRINCIPALS[0])
    other = typed(json.dumps(dict(reversed(msg.items())), indent=2), PRINCIPALS[0])
    changed = typed(json.dumps({**msg, "amount": 201}), PRINCIPALS[0])
    assert one is not None and other is not None and changed is not None
    assert one.fingerprint == other.fingerprint != changed.fingerprint


TYPED_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
        st.sampled_from(["\x7f", "\x00", "\x1f", "\x85", "é", "\U0001f0cf", "\\", '"', "/"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=4), inner, max_size=3),
    ),
    max_leaves=10,
)


@settings(max_examples=800, derandomize=True, deadline=None)
@given(st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=5), TYPED_JSON, max_size=5))
def test_the_typed_fingerprint_equals_the_standard_one(body: dict[str, Any]) -> None:
    """For everything the typed decoder can hand it (no float), byte for byte the same
    canonical JSON, so the same SHA-256."""
    body.pop("id", None)
    assert typed_fingerprint(body) == fingerprint(body)
