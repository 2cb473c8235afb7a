"""The event vocabulary: every event round-trips; the envelope hash covers every field;
old versions are upcast on read, never rewritten (docs/ARCHITECTURE.md, "The hash chain")."""

from __future__ import annotations

import dataclasses
import itertools
import random
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import msgpack
import pytest

import events  # noqa: F401  (importing the package registers every event type)
from events.base import Event, event, event_class, from_data, registered, to_data, upcaster
from events.black_jack import (
    CardBurnt,
    CardDealt,
    CardsDiscarded,
    DealerPeeked,
    HandActed,
    HoleCardRevealed,
    ShoeRevealed,
    ShoeShuffled,
)
from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import decode, encode, fold_into, fold_view, to_json
from events.dice import DicePassed, DiceRolled, PlayerSeated, PlayerUnseated
from events.envelope import GENESIS_HASH, Envelope, chain_hash, expected_hash, seal
from events.expenses import ExpenseRecorded
from events.license import LicenseRecorded, OccasionStarted
from events.merchandise import (
    MerchandiseAwarded,
    MerchandiseStocked,
    PrizeLimitReached,
    StockItem,
)
from events.raffles import RaffleOpened
from events.tables import (
    BetCancelled,
    BetPlaced,
    BetSettlement,
    BetsReopened,
    NoMoreBets,
    OutcomeRecorded,
    PartSettled,
    RoundEnded,
    RoundOpened,
    RoundVoided,
    Settled,
    TableClosed,
    TableOpened,
    WagerAdded,
)
from tests.unit.bell_jars.samples import DEAL_SAMPLES
from tests.unit.raffles.samples import RAFFLE_SAMPLES

# --- test-only event types (unique names; registered once, at import) ------------------


@event("TestOnlyUpcast", version=2)
@dataclass(frozen=True, slots=True, kw_only=True)
class TestOnlyUpcast(Event):
    """v1 had ``cents``; v2 renamed it ``amount`` and added ``currency``."""

    __test__ = False  # not a pytest test class

    amount: int
    currency: str


@upcaster("TestOnlyUpcast", 1)
def _test_only_upcast_v1(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k != "cents"}
    out["amount"] = data["cents"]
    out["currency"] = "USD"
    return out


@event("TestOnlyUpcastChain", version=3)
@dataclass(frozen=True, slots=True, kw_only=True)
class TestOnlyUpcastChain(Event):
    """v1 ``{"n"}`` → v2 ``{"n", "doubled"}`` → v3 ``{"n", "doubled", "label"}``."""

    __test__ = False

    n: int
    doubled: int
    label: str


@upcaster("TestOnlyUpcastChain", 1)
def _chain_v1(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "doubled": data["n"] * 2}


@upcaster("TestOnlyUpcastChain", 2)
def _chain_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "label": f"n={data['n']}"}


@event("TestOnlyDuplicateName")
@dataclass(frozen=True, slots=True, kw_only=True)
class TestOnlyDuplicateName(Event):
    __test__ = False

    x: int


# --- sample bodies -----------------------------------------------------------------------

SETTLED = Settled(
    round=3,
    outcome={"pocket": "00", "spun_from": "17"},
    settlements=(
        BetSettlement(bet_id="b-1", player="p-1", amount=200, result="won", paid=7200),
        BetSettlement(bet_id="b-2", player="p-2", amount=500, result="lost", paid=0),
        BetSettlement(bet_id="b-3", player="p-1", amount=100, result="returned", paid=100),
    ),
    wagered=800,
    paid=7300,
)

HAND_WRITTEN: list[Event] = [
    TableOpened(
        table="roulette-1",
        game="roulette",
        config={"options": ["basket", "five_adjacent"], "limits": {"inside": 200, "outside": 500}},
        outcome_mode="dealer",
    ),
    RoundOpened(round=1),
    BetPlaced(
        round=1,
        bet_id="b-1",
        player="p-1",
        bet={"kind": "split", "numbers": ["17", "20"]},
        amount=200,
    ),
    BetCancelled(round=1, bet_id="b-1", player="p-1", amount=200),
    NoMoreBets(round=1),
    OutcomeRecorded(round=1, outcome={"pocket": "0", "spun_from": "17"}, source="dealer"),
    SETTLED,
    Settled(round=4, outcome={"pocket": "5"}, settlements=(), wagered=0, paid=0),
    TableClosed(reason="end of night"),
    WagerAdded(
        round=2, bet_id="bj-1.2.5", wager_id="bj-1.2.5/d", player="p-1", amount=500, kind="double"
    ),
    PartSettled(
        round=2,
        part="insurance",
        settlements=(BetSettlement("bj-1.2.5/i", "p-1", 250, "won", 750),),
        wagered=250,
        paid=750,
    ),
    RoundEnded(round=2),
    RoundVoided(round=3, reason="the wheel's ball left the wheel"),
    ChipsIssued(player="p-1", amount=1000),
    ChipsRedeemed(player="p-1", amount=250),
    ExpenseRecorded(
        number=1,
        payee="Acme Gaming Supply",
        address="1 Main St, Albany NY",
        description="Roulette layout",
        amount=12_345,
        category="equipment_and_supplies",
        covers="occasion",
        occasion="night-1",
        period_start="2026-11-01",
        period_end="2026-12-31",
        recorded_by="mic-1",
        recorded_at=1_795_953_600_000,
    ),
    LicenseRecorded(
        organization="org-1",
        license_number="GC-1",
        games=("roulette", "wheel"),
        period_start="2026-11-01",
        period_end="2026-12-31",
    ),
    OccasionStarted(occasion="night-1", name="Autumn night"),
    MerchandiseStocked(
        items=(
            StockItem(item="mug-1", prize="small", value=500, donated=False),
            StockItem(item="bear-1", prize="large", value=2_500, donated=True),
        ),
        source="opening",
    ),
    MerchandiseAwarded(
        round=3,
        bet_id="prize-1.3.7",
        player="p-1",
        item="mug-1",
        prize="small",
        value=500,
        donated=False,
        aggregate=3_000,
    ),
    PrizeLimitReached(aggregate=1_000_000, limit=1_000_000),
    ShoeShuffled(
        shuffle=1,
        cards=3,
        commitments=("a" * 64, "b" * 64, "c" * 64),
        sealed="c2VhbGVk",
        reason="new_shoe",
    ),
    ShoeShuffled(shuffle=2, cards=40, commitments=(), sealed=None, reason="box_empty"),
    CardBurnt(round=1, shuffle=1, position=0, card=None, reason="first_card"),
    CardBurnt(round=1, shuffle=1, position=None, card="7H", reason="dead_card"),
    CardDealt(round=1, to="3.0", shuffle=1, position=1, card="10S", salt="d" * 32, face_up=True),
    CardDealt(round=1, to="dealer", shuffle=1, position=2, card=None, salt=None, face_up=False),
    DealerPeeked(round=1, natural=False),
    HandActed(round=1, hand="3.0", action="split", player="p-1", new_hand="3.1"),
    HandActed(round=1, hand="3.1", action="stand", player=None, new_hand=None),
    HoleCardRevealed(round=1, card="KD", salt="e" * 32),
    CardsDiscarded(round=1, holders=("3.0", "dealer"), cards=5),
    ShoeRevealed(shuffle=1, seed="f" * 64, cards=("AS", "10S", "KD")),
    DiceRolled(round=1, turn="dealer", player=None, dice=(3, 4), total=7, thrown_by="cage"),
    DiceRolled(round=1, turn="player", player="p-1", dice=(6, 6), total=12, thrown_by="rng"),
    BetsReopened(round=1),
    PlayerSeated(seat=3, player="p-1"),
    PlayerUnseated(seat=3, player="p-1"),
    DicePassed(round=2, from_seat=3, seat=5, player="p-2"),
    *RAFFLE_SAMPLES,
    *DEAL_SAMPLES,
]


def _sample(tp: Any, rng: random.Random) -> Any:
    """A value of type ``tp`` built from its annotation (for event types added later)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is str:
        return f"s{rng.randrange(1000)}"
    if tp is bool:
        return rng.random() < 0.5
    if tp is int:
        return rng.randrange(-5, 100_000)
    if tp is float:
        return rng.random()
    if tp is type(None):
        return None
    if tp is Any:
        return {"k": [1, "a", None]}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: _sample(hints[f.name], rng) for f in dataclasses.fields(tp) if f.init})
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
        hints = typing.get_type_hints(tp)
        return tp(**{name: _sample(hints[name], rng) for name in tp._fields})
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_sample(args[0], rng) for _ in range(3))
        return tuple(_sample(a, rng) for a in args)
    if origin is list:
        return [_sample(args[0], rng) for _ in range(2)]
    if origin in (dict, Mapping):
        return {"a": _sample(args[1], rng), "b": _sample(args[1], rng)}
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _sample(inner[0], rng)
    if origin is typing.Literal:
        return args[0]
    raise AssertionError(f"no sample for {tp!r}: add one to HAND_WRITTEN")


def _generated() -> list[Event]:
    rng = random.Random(4620)
    return [_sample(cls, rng) for _name, cls in sorted(registered().items())]


ALL_SAMPLES = HAND_WRITTEN + _generated()


def _seal(body: Event, **overrides: Any) -> Envelope:
    fields: dict[str, Any] = {
        "id": "ev-1",
        "stream": "table:roulette-1",
        "seq": 7,
        "ts": 1_764_412_345_123,
        "actor": "dealer:d-1",
        "causation": "c-0001",
        "correlation": "roulette-1#3",
        "prev_hash": "a" * 64,
    }
    fields.update(overrides)
    return seal(body, **fields)


# --- round trips -------------------------------------------------------------------------


def test_every_registered_event_type_has_a_sample() -> None:
    covered = {type(e).NAME for e in ALL_SAMPLES}
    assert set(registered()) <= covered
    # The hand-written samples cover every event type of the vocabulary's own modules.
    hand = {type(e).NAME for e in HAND_WRITTEN}
    own = {n for n, c in registered().items() if c.__module__.startswith("events.")}
    assert own <= hand


@pytest.mark.parametrize("body", ALL_SAMPLES, ids=lambda e: type(e).NAME)
def test_body_round_trips_through_plain_data(body: Event) -> None:
    data = to_data(body)
    assert _is_plain(data)
    back = from_data(type(body).NAME, type(body).VERSION, data)
    assert back == body
    assert type(back) is type(body)


@pytest.mark.parametrize("body", ALL_SAMPLES, ids=lambda e: type(e).NAME)
def test_envelope_round_trips_through_the_msgpack_codec(body: Event) -> None:
    env = _seal(body)
    raw = encode(env)
    assert isinstance(raw, bytes)
    back = decode(raw, log_id="1764412345123-0")
    assert back == env  # log_id is not part of equality
    assert back.log_id == "1764412345123-0"
    assert back.event() == body
    assert expected_hash(back) == back.hash
    json_view = to_json(back)
    assert json_view["log_id"] == "1764412345123-0"
    assert json_view["data"] == env.data
    assert json_view["seq"] == 7 and json_view["type"] == type(body).NAME


def folded(raws: list[bytes]) -> list[tuple[Any, ...]]:
    """What :func:`fold_into` hands over, in order."""
    got: list[tuple[Any, ...]] = []
    fold_into(raws, lambda *args: got.append(args))
    return got


def test_a_rebuild_reads_every_event_as_the_plain_decoder_does() -> None:
    """The rebuild's typed decoder (``fold_into``) gives each stored envelope's type,
    stream, data and occurred-at exactly as the full unpack (``fold_view``) does, for
    every event type; an entry of another shape (here an array one field short, and
    data that is not a map) goes the plain way and comes out the same."""
    raws = [encode(_seal(body)) for body in ALL_SAMPLES]
    assert folded(raws) == [fold_view(raw) for raw in raws]
    env = _seal(ALL_SAMPLES[0])
    short = msgpack.packb([env.id, env.type, env.version, env.stream, env.seq, env.ts])
    odd = msgpack.packb([*msgpack.unpackb(raws[0])[:11], ["not", "a", "map"]])
    with pytest.raises(IndexError):
        folded([short])  # as fold_view: an entry too short to fold
    assert folded([odd]) == [fold_view(odd)]
    assert folded([odd])[0][2] == ["not", "a", "map"]


def test_nested_settlements_come_back_as_a_tuple_of_dataclasses() -> None:
    back = decode(encode(_seal(SETTLED))).event()
    assert isinstance(back, Settled)
    assert isinstance(back.settlements, tuple)
    assert all(isinstance(s, BetSettlement) for s in back.settlements)
    assert back.settlements[0] == BetSettlement(
        bet_id="b-1", player="p-1", amount=200, result="won", paid=7200
    )
    assert back == SETTLED


def test_string_tuples_come_back_as_tuples() -> None:
    lic = next(e for e in HAND_WRITTEN if isinstance(e, LicenseRecorded))
    assert isinstance(lic, LicenseRecorded)
    back = decode(encode(_seal(lic))).event()
    assert isinstance(back, LicenseRecorded)
    assert back.games == ("roulette", "wheel")


def _is_plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


# --- the envelope hash -------------------------------------------------------------------


def test_seal_then_expected_hash_matches() -> None:
    for body in ALL_SAMPLES:
        env = _seal(body)
        assert len(env.hash) == 64
        assert expected_hash(env) == env.hash


def test_the_first_event_links_to_the_genesis_hash() -> None:
    env = _seal(RoundOpened(round=1), seq=1, prev_hash=GENESIS_HASH)
    assert env.prev_hash == "0" * 64
    assert expected_hash(env) == env.hash


ALTERATIONS: dict[str, Any] = {
    "id": "ev-2",
    "type": "NoMoreBets",
    "version": 2,
    "stream": "table:roulette-2",
    "seq": 8,
    "ts": 1_764_412_345_124,
    "actor": "dealer:d-2",
    "causation": "c-0002",
    "correlation": None,
    "prev_hash": "b" * 64,
    "data": {**to_data(SETTLED), "paid": 7301},
}


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_changing_any_field_changes_the_hash(name: str) -> None:
    env = _seal(SETTLED)
    altered = dataclasses.replace(env, **{name: ALTERATIONS[name]})
    assert expected_hash(altered) != env.hash


def test_changing_a_nested_value_changes_the_hash() -> None:
    env = _seal(SETTLED)
    data = to_data(SETTLED)
    data["settlements"][1]["paid"] = 1
    assert expected_hash(dataclasses.replace(env, data=data)) != env.hash
    data = to_data(SETTLED)
    data["outcome"]["pocket"] = "0"
    assert expected_hash(dataclasses.replace(env, data=data)) != env.hash


def test_correlation_none_and_empty_string_hash_differently() -> None:
    env = _seal(RoundOpened(round=1), correlation=None)
    assert expected_hash(dataclasses.replace(env, correlation="")) != env.hash


def test_the_hash_is_independent_of_dict_key_order() -> None:
    env = _seal(SETTLED)
    data = env.data

    def reversed_keys(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reversed_keys(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(v) for v in value]
        return value

    flipped = reversed_keys(data)
    assert list(flipped) != list(data)
    assert list(flipped["settlements"][0]) != list(data["settlements"][0])
    assert expected_hash(dataclasses.replace(env, data=flipped)) == env.hash
    # ...also after a trip through msgpack with the keys in the other order.
    back = decode(encode(dataclasses.replace(env, data=flipped)))
    assert expected_hash(back) == env.hash


def test_the_hash_is_deterministic_and_keyword_only() -> None:
    kwargs: dict[str, Any] = {
        "id": "x",
        "type": "RoundOpened",
        "version": 1,
        "stream": "table:t",
        "seq": 1,
        "ts": 0,
        "actor": "a",
        "causation": "c",
        "correlation": None,
        "prev_hash": GENESIS_HASH,
        "data": {"round": 1},
    }
    assert chain_hash(**kwargs) == chain_hash(**kwargs)
    assert chain_hash(**kwargs) == _seal(RoundOpened(round=1), **_seal_fields(kwargs)).hash


def _seal_fields(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k not in ("type", "version", "data")}


def test_a_chain_links_each_event_to_the_previous_hash() -> None:
    prev = GENESIS_HASH
    chain = []
    for seq, body in enumerate(HAND_WRITTEN, start=1):
        env = _seal(body, seq=seq, id=f"ev-{seq}", prev_hash=prev)
        chain.append(env)
        prev = env.hash
    assert len({e.hash for e in chain}) == len(chain)
    for before, after in itertools.pairwise(chain):
        assert after.prev_hash == before.hash


# --- upcasting and the registry ----------------------------------------------------------


def test_a_v1_body_is_upcast_on_read_and_never_rewritten() -> None:
    v1 = Envelope(
        id="ev-old",
        type="TestOnlyUpcast",
        version=1,
        stream="cage",
        seq=1,
        ts=1,
        actor="system",
        causation="c-1",
        correlation=None,
        prev_hash=GENESIS_HASH,
        hash="",
        data={"cents": 250},
    )
    v1 = dataclasses.replace(v1, hash=expected_hash(v1))
    back = decode(encode(v1))
    assert back.version == 1
    assert back.data == {"cents": 250}  # stored data stays as written
    assert expected_hash(back) == back.hash  # so the chain still verifies
    body = back.event()
    assert body == TestOnlyUpcast(amount=250, currency="USD")
    assert from_data("TestOnlyUpcast", 1, {"cents": 9}) == TestOnlyUpcast(amount=9, currency="USD")


def test_the_current_version_is_not_upcast() -> None:
    body = TestOnlyUpcast(amount=5, currency="EUR")
    env = _seal(body)
    assert env.version == 2
    assert decode(encode(env)).event() == body


def test_upcasters_chain_through_every_version() -> None:
    assert from_data("TestOnlyUpcastChain", 1, {"n": 4}) == TestOnlyUpcastChain(
        n=4, doubled=8, label="n=4"
    )
    assert from_data("TestOnlyUpcastChain", 2, {"n": 4, "doubled": 9}) == TestOnlyUpcastChain(
        n=4, doubled=9, label="n=4"
    )


def test_registering_a_name_twice_for_another_class_raises() -> None:
    class Impostor(Event):
        __slots__ = ()

    with pytest.raises(ValueError, match="TestOnlyDuplicateName"):
        event("TestOnlyDuplicateName")(Impostor)
    assert event_class("TestOnlyDuplicateName") is TestOnlyDuplicateName
    with pytest.raises(ValueError, match="ChipsIssued"):
        event("ChipsIssued")(Impostor)
    assert event_class("ChipsIssued") is ChipsIssued


def test_registering_the_same_class_again_is_harmless() -> None:
    assert event("TestOnlyDuplicateName")(TestOnlyDuplicateName) is TestOnlyDuplicateName
    assert event_class("TestOnlyDuplicateName") is TestOnlyDuplicateName


def test_an_unknown_event_type_is_reported() -> None:
    from events.base import UnknownEvent

    with pytest.raises(UnknownEvent):
        from_data("NoSuchEventEver", 1, {})
    env = dataclasses.replace(_seal(RoundOpened(round=1)), type="NoSuchEventEver")
    with pytest.raises(UnknownEvent):
        decode(encode(env)).event()


def test_a_license_recorded_before_the_tie_option_upcasts_to_none() -> None:
    v1 = {
        "organization": "org-1",
        "license_number": "GC-1",
        "games": ["roulette"],
        "period_start": "2026-11-01",
        "period_end": "2026-12-31",
    }
    back = from_data("LicenseRecorded", 1, v1)
    assert isinstance(back, LicenseRecorded) and back.tie_option is None


def test_a_raffle_opened_before_the_sealed_board_upcasts_to_none_sealed() -> None:
    """``RaffleOpened`` version 1 carried no sealed board (a server board dealt then is
    kept in Redis): read at version 2 with ``sealed_board == ""``."""
    v1 = {"raffle": "qoh-1", "kind": "queen_of_hearts", "config": {"board": {"mode": "server"}}}
    back = from_data("RaffleOpened", 1, v1)
    assert isinstance(back, RaffleOpened) and back.sealed_board == ""
    assert back.config == v1["config"] and RaffleOpened.VERSION == 2
