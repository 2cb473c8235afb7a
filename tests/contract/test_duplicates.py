"""``verify`` sees a command applied twice (services/store/verify.py ``CommandCheck``),
written straight into a real store the way a lost idempotency record would let it happen:
the same actor and causation (command id) under a second idempotency key."""

from __future__ import annotations

import random
import uuid

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.envelope import Envelope, seal
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    EventStore,
    Head,
    pack_result,
)
from services.store.verify import CommandCheck, Duplicate, proven, verify_all

TS = 1_764_412_345_000


def sealed(
    bodies: list[Event], stream: str, head: Head, actor: str, causation: str, ids: list[str]
) -> list[Envelope]:
    out = []
    for body, event_id in zip(bodies, ids, strict=True):
        env = seal(
            body,
            id=event_id,
            stream=stream,
            seq=head.version + 1,
            ts=TS + head.version,
            actor=actor,
            causation=causation,
            correlation=None,
            prev_hash=head.last_hash,
        )
        out.append(env)
        head = Head(env.seq, env.hash)
    return out


class Writer:
    """Appends commands to a real store as the actors do, one append per call."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    async def apply(
        self,
        stream: str,
        commands: list[tuple[str, str, list[Event], list[str] | None]],
    ) -> list[Envelope]:
        """One append of several commands: (actor, causation, events, event ids or None)."""
        head = await self.store.head(stream)
        writes, out = [], []
        for actor, causation, bodies, ids in commands:
            envs = sealed(
                bodies, stream, head, actor, causation, ids or [uuid.uuid4().hex for _ in bodies]
            )
            if envs:
                head = Head(envs[-1].seq, envs[-1].hash)
            moves = [
                BalanceMove(player=b.player, delta=b.amount if isinstance(b, ChipsIssued) else 0)
                for b in bodies
                if isinstance(b, ChipsIssued)
            ]
            writes.append(
                CommandWrite(
                    key=f"{actor}/{uuid.uuid4().hex}",  # a fresh idempotency key each time
                    result=pack_result("fp", {"ok": True, "result": {}}),
                    events=envs,
                    moves=moves,
                )
            )
            out += envs
        got = await self.store.append(stream, await self.store.head(stream), writes)
        assert isinstance(got, Appended), got
        return out


async def check(store: EventStore) -> tuple[CommandCheck, list[Duplicate]]:
    commands = CommandCheck()
    reports = await verify_all(store, commands=commands)
    assert all(r.ok for r in reports), reports  # the chains themselves are intact
    found = await commands.findings(store, {r.stream: proven(r) for r in reports})
    return commands, found


async def test_a_night_of_distinct_commands_has_no_finding(store: EventStore) -> None:
    rng = random.Random(8)
    w = Writer(store)
    for n in range(60):
        stream = rng.choice(["cage", "table:a", "table:b"])
        batch = [
            (
                rng.choice(["cashier:c-1", "dealer:d-1", "player:p-1"]),
                f"cmd-{n}-{i}",
                [ChipsIssued(player="p-1", amount=1)] * rng.randint(1, 3),
                None,
            )
            for i in range(rng.randint(1, 4))
        ]
        await w.apply(stream, batch)
    # Two commands of different clients with the same command id are two commands.
    await w.apply("cage", [("cashier:c-1", "same-id", [ChipsIssued(player="p-2", amount=1)], None)])
    await w.apply("cage", [("cashier:c-2", "same-id", [ChipsIssued(player="p-2", amount=1)], None)])
    # System commands: actor system, each its own causation.
    for n in range(3):
        await w.apply(
            "license", [("system", f"system-{n}", [ChipsIssued(player="x", amount=1)], None)]
        )
    commands, found = await check(store)
    assert found == []
    assert commands.events == len(await store.log_raw("0", 100_000))  # every event was seen


async def test_a_command_applied_again_later_is_reported_at_its_second_run(
    store: EventStore,
) -> None:
    w = Writer(store)
    sale = [ChipsIssued(player="p-1", amount=2000)]
    await w.apply("cage", [("cashier:c-1", "c-7", sale, None)])
    await w.apply("cage", [("cashier:c-1", "c-8", [ChipsRedeemed(player="p-1", amount=5)], None)])
    # The record of c-7 is gone, its retry is applied again: new ids, same actor/causation.
    await w.apply("cage", [("cashier:c-1", "c-7", sale, None)])
    commands, found = await check(store)
    assert found == [
        Duplicate(
            kind="command",
            stream="cage",
            seq=3,
            first_stream="cage",
            first_seq=1,
            what="command 'c-7' of cashier:c-1",
        )
    ]
    assert found[0].describe() == (
        "cage seq 3: command 'c-7' of cashier:c-1 applied again; its first events are at cage seq 1"
    )
    assert commands.runs == 3


async def test_a_command_applied_twice_in_a_row_repeats_its_event_ids(store: EventStore) -> None:
    w = Writer(store)
    ids = ["ev-c9-0", "ev-c9-1"]
    bodies: list[Event] = [
        ChipsIssued(player="p-1", amount=10),
        ChipsIssued(player="p-1", amount=20),
    ]
    # Adjacent: one run of four events, so only the repeated (derived) ids tell.
    await w.apply(
        "cage", [("cashier:c-1", "c-9", bodies, ids), ("cashier:c-1", "c-9", bodies, ids)]
    )
    _commands, found = await check(store)
    assert [(d.kind, d.stream, d.seq, d.first_seq) for d in found] == [
        ("event id", "cage", 3, 1),
        ("event id", "cage", 4, 2),
    ]
    assert found[0].describe() == "cage seq 3: event id ev-c9-0 repeats the event at cage seq 1"


async def test_the_later_application_in_commit_order_is_the_one_reported_across_streams(
    store: EventStore,
) -> None:
    w = Writer(store)
    # Applied first on table:z, then again on table:a (a stream walked earlier by name).
    await w.apply("table:z", [("dealer:d", "d-1", [ChipsIssued(player="p", amount=1)], None)])
    await w.apply("table:a", [("dealer:d", "d-1", [ChipsIssued(player="p", amount=1)], None)])
    _commands, found = await check(store)
    assert [(d.stream, d.seq, d.first_stream, d.first_seq) for d in found] == [
        ("table:a", 1, "table:z", 1)
    ]


async def test_a_digest_seen_twice_is_confirmed_on_the_strings_before_it_is_reported(
    store: EventStore,
) -> None:
    w = Writer(store)
    await w.apply("cage", [("cashier:c-1", "c-1", [ChipsIssued(player="p", amount=1)], ["e-1"])])
    await w.apply("cage", [("cashier:c-1", "c-2", [ChipsIssued(player="p", amount=1)], ["e-2"])])
    commands = CommandCheck()
    reports = await verify_all(store, commands=commands)
    # As if two different commands' and ids' digests had collided in the walk.
    commands._suspect_runs.add(hash(("cashier:c-1", "c-2")))
    commands._suspect_ids.add(hash("e-2"))
    assert await commands.findings(store, {r.stream: proven(r) for r in reports}) == []
