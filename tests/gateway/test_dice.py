"""The dice games of one roll over the real websocket protocol: a round of Chuck-A-Luck,
Hazard and Over and Under Seven in dealer mode and of Hazard in RNG mode (who threw is the
event's source), and every bad input with its stable code and nothing changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

CHUCK = "chuck-1"
HAZARD = "hazard-1"
HAZARD_RNG = "hazard-2"
OU = "ou-1"
OU_OPEN = "ou-2"
TABLES = (CHUCK, HAZARD, HAZARD_RNG, OU, OU_OPEN)
START = 10_000


def dice_night(org: str) -> dict[str, Any]:
    doc = night_doc(org)
    doc["license"]["games"] = ["chuck_a_luck", "hazard", "over_and_under_seven"]
    doc["tables"] = [
        {"id": CHUCK, "game": "chuck_a_luck", "outcome_mode": "dealer"},
        {"id": HAZARD, "game": "hazard", "outcome_mode": "dealer"},
        {"id": HAZARD_RNG, "game": "hazard", "outcome_mode": "rng"},
        {"id": OU, "game": "over_and_under_seven", "outcome_mode": "dealer"},
        {
            "id": OU_OPEN,
            "game": "under_and_over_seven",
            "outcome_mode": "dealer",
            "options": {"allow_several_spaces": True},
        },
    ]
    return doc


class Night:
    def __init__(self, server: LiveServer, dealer: WsClient, player: WsClient) -> None:
        self.server = server
        self.dealer = dealer
        self.player = player

    async def snapshot(self) -> tuple[Any, ...]:
        store = self.server.runtime.store
        heads = [(await store.head(f"table:{t}")).version for t in TABLES]
        return (*heads, await store.balances(), await store.log_head())

    async def refused(self, client: WsClient, code: str, **msg: Any) -> dict[str, Any]:
        before = await self.snapshot()
        reply = await client.send({"id": client.next_id(), **msg})
        assert reply["ok"] is False, reply
        assert reply["error"]["code"] == code, reply
        assert await self.snapshot() == before
        error: dict[str, Any] = reply["error"]
        return error

    async def ok(self, client: WsClient, op: str, **msg: Any) -> dict[str, Any]:
        reply = await client.cmd(op, **msg)
        assert reply["ok"], reply
        result: dict[str, Any] = reply["result"]
        return result

    async def bet(self, table: str, bet: dict[str, Any], amount: int, player: str = "p-1") -> None:
        client = self.player if player == "p-1" else self.dealer
        await self.ok(client, "place_bet", table=table, player=player, bet=bet, amount=amount)

    async def recorded(self, table: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The data of the table's last ``OutcomeRecorded`` and ``Settled``, as stored."""
        envelopes = await self.server.runtime.store.read(f"table:{table}")
        recorded = [e.data for e in envelopes if e.type == "OutcomeRecorded"][-1]
        settled = [e.data for e in envelopes if e.type == "Settled"][-1]
        return dict(recorded), dict(settled)


@pytest.fixture
async def night(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[Night]:
    server = await start_server(redis_server.url, dice_night(org))
    cashier = await server.connect(token("cashier"))
    for player in ("p-1", "p-2"):
        assert (await cashier.cmd("buy_chips", player=player, amount=START))["ok"]
    dealer = await server.connect(dealer_token(*TABLES))
    for table in TABLES:
        assert (await dealer.cmd("open_round", table=table))["ok"]
    player = await server.connect(player_token("p-1"))
    yield Night(server, dealer, player)
    await server.stop()


async def test_a_chuck_a_luck_round_pays_by_how_many_dice_show_the_number(night: Night) -> None:
    """4620.11(b)(1): one die 1 to 1, two dice 2 to 1, none loses; bets on several numbers."""
    await night.bet(CHUCK, {"number": 5}, 100)
    await night.bet(CHUCK, {"number": 2}, 200)
    await night.bet(CHUCK, {"number": 6}, 300)
    await night.ok(night.dealer, "no_more_bets", table=CHUCK)
    result = await night.ok(
        night.dealer, "record_outcome", table=CHUCK, outcome={"dice": [5, 2, 5]}
    )
    assert result["outcome"] == {"dice": [5, 2, 5], "total": 12, "thrown_by": "cage"}
    assert result["wagered"] == 600 and result["paid"] == 300 + 400
    recorded, settled = await night.recorded(CHUCK)
    assert recorded["source"] == "cage"
    assert [s["result"] for s in settled["settlements"]] == ["won", "won", "lost"]
    assert (await night.server.runtime.store.balances())["p-1"] == START - 600 + 700


async def test_a_hazard_round_in_dealer_mode(night: Night) -> None:
    """4620.12(c): a triple wins the specific and any triple, the total (D-3) and the chuck
    number; low and odd lose on it; the numbers bet pays N for 1 (D-2)."""
    bets = [
        ({"kind": "specific_triple", "face": 3}, 150, 181 * 150),
        ({"kind": "any_triple"}, 100, 31 * 100),
        ({"kind": "low"}, 100, 0),
        ({"kind": "odd"}, 100, 0),
        ({"kind": "number", "total": 9}, 100, 6 * 100),
        ({"kind": "chuck", "number": 3}, 100, 4 * 100),
        ({"kind": "chuck", "number": 4}, 100, 0),
    ]
    for bet, amount, _ in bets:
        await night.bet(HAZARD, bet, amount)
    await night.ok(night.dealer, "no_more_bets", table=HAZARD)
    result = await night.ok(
        night.dealer,
        "record_outcome",
        table=HAZARD,
        outcome={"dice": [3, 3, 3], "thrown_by": "dealer"},
    )
    assert result["paid"] == sum(p for _, _, p in bets)
    assert result["wagered"] == sum(a for _, a, _ in bets)
    recorded, settled = await night.recorded(HAZARD)
    assert recorded["source"] == "dealer"
    assert [s["paid"] for s in settled["settlements"]] == [p for _, _, p in bets]


async def test_a_hazard_round_in_rng_mode_is_drawn_and_settled(night: Night) -> None:
    await night.bet(HAZARD_RNG, {"kind": "high"}, 100)
    await night.bet(HAZARD_RNG, {"kind": "low"}, 100)
    await night.ok(night.dealer, "no_more_bets", table=HAZARD_RNG)
    await night.refused(
        night.dealer,
        "wrong_mode",
        op="record_outcome",
        table=HAZARD_RNG,
        outcome={"dice": [1, 2, 3]},
    )
    result = await night.ok(night.dealer, "draw_outcome", table=HAZARD_RNG)
    faces = result["outcome"]["dice"]
    assert len(faces) == 3 and all(1 <= f <= 6 for f in faces)
    assert result["outcome"]["thrown_by"] == "rng"
    recorded, _ = await night.recorded(HAZARD_RNG)
    assert recorded["source"] == "rng" and recorded["outcome"]["dice"] == faces
    triple = len(set(faces)) == 1
    assert result["paid"] == (0 if triple else 200)


async def test_an_over_and_under_seven_round_thrown_by_a_player(night: Night) -> None:
    """4620.13(b)(1): 7 pays 4 to 1; one space per player per roll."""
    await night.bet(OU, {"space": "seven"}, 100)
    await night.bet(OU, {"space": "over_7"}, 200, player="p-2")
    await night.ok(night.dealer, "no_more_bets", table=OU)
    result = await night.ok(
        night.dealer, "record_outcome", table=OU, outcome={"dice": [6, 1], "thrown_by": "player"}
    )
    assert result["outcome"] == {"dice": [6, 1], "total": 7, "thrown_by": "player"}
    assert result["paid"] == 500
    recorded, _ = await night.recorded(OU)
    assert recorded["source"] == "player"


async def test_a_second_space_is_refused_unless_the_table_allows_it(night: Night) -> None:
    await night.bet(OU, {"space": "under_7"}, 100)
    error = await night.refused(
        night.player, "one_space_per_roll", op="place_bet", table=OU, player="p-1",
        bet={"space": "over_7"}, amount=100,
    )  # fmt: skip
    assert "4620.13(b)(1)" in error["message"]
    # The dealer placing it for the player counts as the player's own bet.
    await night.refused(
        night.dealer, "one_space_per_roll", op="place_bet", table=OU, player="p-1",
        bet={"space": "seven"}, amount=100,
    )  # fmt: skip
    for space in ("under_7", "seven", "over_7"):
        await night.bet(OU_OPEN, {"space": space}, 100)


@pytest.mark.parametrize(
    ("table", "outcome", "code"),
    [
        (CHUCK, {"dice": [1, 2, 7]}, "invalid_die_face"),
        (HAZARD, {"dice": [0, 2, 3]}, "invalid_die_face"),
        (OU, {"dice": [1, 2, 3]}, "wrong_number_of_dice"),
        (HAZARD, {"dice": [1, 2]}, "wrong_number_of_dice"),
        (HAZARD, {"dice": [1, 2, 3], "thrown_by": "player"}, "invalid_thrower"),
        (OU, {"dice": [1, 2], "thrown_by": "rng"}, "invalid_thrower"),
        (OU, {"dice": "1,2"}, "bad_request"),
    ],
)
async def test_a_bad_roll_changes_nothing(
    night: Night, table: str, outcome: Any, code: str
) -> None:
    await night.bet(table, night_bet(table), 100)
    await night.ok(night.dealer, "no_more_bets", table=table)
    await night.refused(night.dealer, code, op="record_outcome", table=table, outcome=outcome)


def night_bet(table: str) -> dict[str, Any]:
    return {CHUCK: {"number": 1}, HAZARD: {"kind": "even"}, OU: {"space": "seven"}}[table]


@pytest.mark.parametrize(
    ("table", "bet", "amount", "code"),
    [
        (HAZARD, {"kind": "specific_triple", "face": 6}, 151, "over_limit"),
        (HAZARD, {"kind": "any_triple"}, 501, "over_limit"),
        (CHUCK, {"number": 1}, 501, "over_limit"),
        (OU, {"space": "seven"}, 501, "over_limit"),
        (HAZARD, {"kind": "raffles"}, 100, "invalid_bet"),
        (CHUCK, {"number": 7}, 100, "invalid_bet"),
        (OU, {"space": "eleven"}, 100, "invalid_bet"),
        (HAZARD, {"kind": "number"}, 100, "bad_request"),
        (CHUCK, {"number": "1"}, 100, "bad_request"),
        (OU, {"spaces": ["seven"]}, 100, "bad_request"),
    ],
)
async def test_a_bad_bet_changes_nothing(
    night: Night, table: str, bet: dict[str, Any], amount: int, code: str
) -> None:
    error = await night.refused(
        night.player, code, op="place_bet", table=table, player="p-1", bet=bet, amount=amount
    )
    if bet.get("kind") == "specific_triple":
        assert "4620.12(c)(1), (c)(7)(ii)" in error["message"]
