"""No overdraft: a wager needs ``balance >= amount``, checked inside the atomic append, so
50 bets racing against one balance can never take it below zero (docs/ARCHITECTURE.md,
"The append script")."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis

from events.cage import ChipsIssued
from events.envelope import seal
from events.tables import BetPlaced
from services.store import keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    EventStore,
    Head,
    InsufficientFunds,
    pack_result,
)
from services.store.verify import verify_all
from tests.conftest import night_doc
from tests.support import dealer_token, player_token, start_server, token

BETS = 50


async def credit(store: EventStore, player: str, amount: int) -> None:
    head = await store.head("cage")
    env = seal(
        ChipsIssued(player=player, amount=amount),
        id=uuid.uuid4().hex,
        stream="cage",
        seq=head.version + 1,
        ts=1,
        actor="cashier:c",
        causation=f"buy-{head.version + 1}",
        correlation=None,
        prev_hash=head.last_hash,
    )
    reply = {"ok": True, "result": {"seq": env.seq}}
    got = await store.append(
        "cage",
        head,
        [
            CommandWrite(
                key=f"cashier/{env.causation}",
                result=pack_result("fp", reply),
                events=[env],
                moves=[BalanceMove(player=player, delta=amount)],
            )
        ],
    )
    assert isinstance(got, Appended), got


def bet_write(stream: str, i: int, player: str, amount: int) -> CommandWrite:
    """Bet ``i`` as the first event of its own ``stream`` (so no version conflict can help)."""
    env = seal(
        BetPlaced(round=1, bet_id=f"b-{i}", player=player, bet={"kind": "red"}, amount=amount),
        id=uuid.uuid4().hex,
        stream=stream,
        seq=1,
        ts=2,
        actor=f"player:{player}",
        causation=f"c-{i}",
        correlation=f"{stream}#1",
        prev_hash=Head(0).last_hash,
    )
    reply = {"ok": True, "result": {"seq": 1, "bet_id": f"b-{i}"}}
    return CommandWrite(
        key=f"{player}/{stream}/c-{i}",
        result=pack_result(f"fp-{i}", reply),
        events=[env],
        moves=[BalanceMove(player=player, delta=-amount)],
    )


async def race(
    redis_server: EmbeddedRedis, org: str, amounts: list[int], tag: str = "t"
) -> list[Appended | InsufficientFunds]:
    """Append bet ``i`` of ``amounts[i]`` to ``table:<tag>-<i>``, all at once over 5
    connections."""
    clients = [aioredis.Redis.from_url(redis_server.url) for _ in range(5)]
    stores = [EventStore(c, org) for c in clients]
    try:

        async def one(i: int) -> Any:
            stream = f"table:{tag}-{i}"
            return await stores[i % len(stores)].append(
                stream, Head(0), [bet_write(stream, i, "p-1", amounts[i])]
            )

        return list(await asyncio.gather(*(one(i) for i in range(len(amounts)))))
    finally:
        for c in clients:
            await c.aclose()


async def test_50_concurrent_debits_never_overdraw_one_balance(
    store: EventStore, redis_server: EmbeddedRedis, redis_client: aioredis.Redis, org: str
) -> None:
    """A credit covering k=14 bets of 70 cents: exactly 14 of 50 racing bets are written."""
    amount, k = 70, 14
    await credit(store, "p-1", amount * k + amount // 2)  # 1015: 14 bets fit, not 15
    outcomes = await race(redis_server, org, [amount] * BETS)

    won = [i for i, o in enumerate(outcomes) if isinstance(o, Appended)]
    refused = [o for o in outcomes if isinstance(o, InsufficientFunds)]
    assert len(won) == k
    assert len(refused) == BETS - k
    assert all(o == InsufficientFunds(index=0, player="p-1") for o in refused)
    assert await store.balance("p-1") == amount * k + amount // 2 - k * amount == 35

    # Exactly the winners' streams exist, each with its one bet; refused ones wrote nothing.
    names = await store.stream_names()
    assert names == sorted(["cage", *(f"table:t-{i}" for i in won)])
    for i in range(BETS):
        stored = await store.read_all(f"table:t-{i}")
        if i in won:
            assert [e.event().amount for e in stored] == [amount]  # type: ignore[attr-defined]
        else:
            assert stored == []
            assert not await redis_client.exists(keys.meta(org, f"table:t-{i}"))
    results = await store.command_results([f"p-1/table:t-{i}/c-{i}" for i in range(BETS)])
    assert [i for i, r in enumerate(results) if r is not None] == won
    assert len(await store.log_raw()) == 1 + k
    assert all(r.ok for r in await verify_all(store))


async def test_random_racing_debits_never_overdraw(
    store: EventStore, redis_server: EmbeddedRedis, org: str
) -> None:
    """Seeded random amounts: the balance ends >= 0, equals credit minus what was written,
    and every refused debit was larger than what was left when it was refused."""
    rng = random.Random(4620)
    for n in range(3):
        start = await store.balance("p-1")
        top_up = rng.randrange(500, 3000)
        await credit(store, "p-1", top_up)
        amounts = [rng.randrange(1, 300) for _ in range(BETS)]
        outcomes = await race(redis_server, org, amounts, tag=f"r{n}")
        spent = sum(a for a, o in zip(amounts, outcomes, strict=True) if isinstance(o, Appended))
        final = await store.balance("p-1")
        assert final >= 0
        assert final == start + top_up - spent
        for a, o in zip(amounts, outcomes, strict=True):
            if isinstance(o, InsufficientFunds):
                assert a > final  # the balance only fell after the refusal
        assert any(isinstance(o, InsufficientFunds) for o in outcomes) == (
            start + top_up < sum(amounts)
        )


@pytest.mark.parametrize("connections", [BETS, 1], ids=["50-tablets", "one-tablet"])
async def test_50_concurrent_bets_through_the_server_never_overdraw(
    redis_server: EmbeddedRedis, org: str, connections: int
) -> None:
    """1000 cents, 50 bets of 100 on red at once (from 50 tablets, or 50 commands in flight
    on one): exactly 10 bets are placed, 40 get ``insufficient_funds``. (50 connections
    of one player are past the 32 a principal may hold: allowed here, for the race.)"""
    server = await start_server(redis_server.url, night_doc(org), principal_connections=BETS)
    try:
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        bought = await cashier.cmd("buy_chips", player="p-1", amount=1000)
        assert bought["ok"], bought
        opened = await dealer.cmd("open_round", table="roulette-1")
        assert opened["ok"], opened
        tablets = [await server.connect(player_token("p-1")) for _ in range(connections)]

        replies = await asyncio.gather(
            *(
                t.cmd(
                    "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=100
                )
                for t in (tablets[i % connections] for i in range(BETS))
            )
        )
        ok = [r for r in replies if r["ok"]]
        refused = [r for r in replies if not r["ok"]]
        assert len(ok) == 10, replies
        assert [r["error"]["code"] for r in refused] == ["insufficient_funds"] * 40, refused
        assert len({r["result"]["bet_id"] for r in ok}) == 10
        assert await server.runtime.store.balance("p-1") == 0

        status, view = await server.get("/api/tables/roulette-1", token("auditor"))
        assert status == 200, view
        assert view["phase"] == "betting" and view["round"] == 1
        assert len(view["bets"]) == 10
        assert {b["bet_id"] for b in view["bets"]} == {r["result"]["bet_id"] for r in ok}
        assert all(b["player"] == "p-1" and b["amount"] == 100 for b in view["bets"])

        events = await server.runtime.store.read_all("table:roulette-1")
        assert [e.type for e in events] == ["TableOpened", "RoundOpened"] + ["BetPlaced"] * 10
        assert [e.seq for e in events] == list(range(1, 13))
        assert sum(e.data["amount"] for e in events if e.type == "BetPlaced") == 1000
        assert all(r.ok for r in await verify_all(server.runtime.store))

        # A retry of a refused bet (same command id) gets the same refusal, even though
        # the player now has chips again; a retry of a placed bet places nothing new.
        assert (await cashier.cmd("buy_chips", player="p-1", amount=300))["ok"]
        bet = {
            "op": "place_bet",
            "table": "roulette-1",
            "player": "p-1",
            "bet": {"kind": "red"},
            "amount": 100,
        }
        j = next(j for j, r in enumerate(replies) if not r["ok"])
        again = await tablets[j % connections].send({**bet, "id": replies[j]["re"]})
        assert again == {**replies[j], "re": replies[j]["re"]}
        w = next(w for w, r in enumerate(replies) if r["ok"])
        again = await tablets[w % connections].send({**bet, "id": replies[w]["re"]})
        assert again == replies[w]
        assert await server.runtime.store.balance("p-1") == 300
        assert len(await server.runtime.store.read_all("table:roulette-1")) == 12
    finally:
        await server.stop()


async def test_a_debit_of_a_hand_dealt_in_the_same_batch_is_not_refused_as_unread(
    store: EventStore,
) -> None:
    """The actor reads the balances of the players the state before a batch says a command
    may debit; a Black Jack hand dealt earlier in the same batch has an owner the state did
    not know yet. A batch that reads balances (a retry is in it) must not count that
    owner's balance as 0: the append script guards the debit, and the double goes through."""
    from services.actor import Actor, Submission
    from services.cage.actor import CageRules
    from services.cage.rules import BuyChips
    from services.chance import ServerChance, seal_key
    from services.games import black_jack as bj
    from services.tables.actor import TableRules
    from services.tables.rules import CancelBet, OpenRound, OpenTable, PlaceBet
    from tests.support import run_until_answered

    def sub(actor: str, cid: str, command: Any) -> Submission[Any]:
        return Submission(
            key=f"{actor}/{cid}", fingerprint="fp-" + cid, command_id=cid, actor=actor,
            command=command,
        )  # fmt: skip

    async def answer(actor: Actor[Any, Any], subs: list[Submission[Any]]) -> list[Any]:
        for s in subs:
            actor.submit_nowait(s)
        await run_until_answered(actor, subs)
        return [s.future.result() for s in subs]

    cage = Actor(store, "cage", CageRules(10**9), publish=lambda _e: None)
    await cage.load()
    await answer(
        cage,
        [
            sub("cashier:c", "b1", BuyChips(player="p-1", amount=200)),
            sub("cashier:c", "b2", BuyChips(player="p-2", amount=200)),
        ],
    )
    chance = ServerChance(seal_key(b"black-jack test secret, 32 bytes"), random.Random(14))
    table = Actor(store, "table:bj", TableRules(chance), publish=lambda _e: None)
    await table.load()
    config = bj.BLACK_JACK.parse_config({"tie_option": 1})
    opening = OpenTable(game="black_jack", config=config, outcome_mode="rng")
    first = await answer(
        table,
        [
            Submission(key="", fingerprint="", command_id="open", actor="system", command=opening),
            sub("dealer:d", "r1", OpenRound()),
            sub("player:p2", "bet2", PlaceBet(player="p-2", bet={"space": 2}, amount=100)),
        ],
    )
    bet2 = first[2]["result"]["bet_id"]
    more = await answer(
        table,
        [
            sub("player:p2", "cancel2", CancelBet(bet_id=bet2, player="p-2")),
            sub("player:p1", "bet1", PlaceBet(player="p-1", bet={"space": 1}, amount=100)),
        ],
    )
    assert all(r["ok"] for r in first + more), first + more
    replies = await answer(
        table,
        [
            sub("dealer:d", "deal", bj.Deal()),
            sub("player:p2", "cancel2", CancelBet(bet_id=bet2, player="p-2")),  # a retry
            sub("player:p1", "dbl", bj.Act(hand="1.0", action="double", player="p-1")),
        ],
    )
    assert replies[0]["ok"] and replies[1]["ok"], replies
    assert replies[2]["ok"], replies[2]  # p-1 holds 100 after the bet: the double is covered
    events = await store.read("table:bj", since=0, limit=1000)
    doubles = [e for e in events if e.type == "WagerAdded" and e.data["kind"] == "double"]
    assert [(d.data["player"], d.data["amount"]) for d in doubles] == [("p-1", 100)]
