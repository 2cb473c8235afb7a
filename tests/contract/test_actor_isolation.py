"""One command's fault fails that command only (services/actor.py), on a real Redis.

The gateway refuses what cannot be stored, but the actor does not rely on it: every
command of a group commit is decided, sealed and encoded on its own before it joins the
batch, and a batch that fails anyway is run again command by command. The mailbox serves
its senders in turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events.envelope import Envelope
from services.actor import Actor, Submission, command_identity
from services.cage.actor import CageRules
from services.cage.rules import BuyChips
from services.store.redis_store import EventStore
from tests.support import run_until_answered


def sale(actor: str, command_id: str, player: str, amount: int = 100) -> Submission[Any]:
    return Submission(
        key=f"{actor}/{command_id}",
        fingerprint="fp-" + command_id,
        command_id=command_id,
        actor=actor,
        command=BuyChips(player=player, amount=amount),
    )


def cage(store: EventStore, publish: Any = None) -> Actor[Any, Any]:
    return Actor(store, "cage", CageRules(10**9), publish=publish or (lambda _envs: None))


async def test_an_unencodable_command_in_a_batch_fails_alone(store: EventStore) -> None:
    """A player id holding a lone surrogate cannot be encoded: that command gets
    ``bad_request`` and writes nothing; the others of the same batch are applied."""
    actor = cage(store)
    await actor.load()
    subs = [sale("cashier:c", f"s-{i}", "p-1") for i in range(30)]
    subs.insert(10, sale("cashier:c", "bad", "p\ud800"))
    subs.insert(20, sale("cashier:c", "bad-2", "q\udfff"))
    for s in subs:
        actor.submit_nowait(s)
    await run_until_answered(actor, subs)
    replies = {s.command_id: s.future.result() for s in subs}
    assert replies.pop("bad")["error"]["code"] == "bad_request"
    assert replies.pop("bad-2")["error"]["code"] == "bad_request"
    assert all(r["ok"] for r in replies.values())
    assert await store.balance("p-1") == 3000
    assert [e.causation for e in await store.read("cage")] == [f"s-{i}" for i in range(30)]


async def test_a_failed_batch_is_run_again_command_by_command(store: EventStore) -> None:
    """A fault after the append (here a subscriber callback that raises once) fails the
    batch; each command is then run alone: each gets its own reply (from its stored one),
    and nothing is applied twice."""
    calls = 0

    def faulty_publish(_envs: Sequence[Envelope]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("a subscriber's bug")

    actor = cage(store, faulty_publish)
    await actor.load()
    subs = [sale("cashier:c", f"s-{i}", "p-1") for i in range(10)]
    for s in subs:
        actor.submit_nowait(s)
    await run_until_answered(actor, subs)
    assert all(s.future.result()["ok"] for s in subs)
    assert [s.future.result()["result"]["seq"] for s in subs] == list(range(1, 11))
    assert len(await store.read("cage")) == 10
    assert await store.balance("p-1") == 1000


async def test_the_mailbox_serves_senders_in_turn(store: EventStore) -> None:
    """200 sales queued by one cashier, then one by another: the second cashier's sale is
    in the first group commit, not behind the whole backlog."""
    actor = cage(store)
    await actor.load()
    flood = [sale("cashier:flood", f"f-{i}", "p-1") for i in range(200)]
    for s in flood:
        actor.submit_nowait(s)
    other = sale("cashier:other", "o-1", "p-2")
    actor.submit_nowait(other)
    await run_until_answered(actor, [*flood, other])
    assert other.future.result()["result"]["seq"] <= 2
    # The flooder's own sales keep their order.
    seqs = [s.future.result()["result"]["seq"] for s in flood]
    assert seqs == sorted(seqs)


async def test_a_command_that_caused_events_is_known_after_a_restart(store: EventStore) -> None:
    actor = cage(store)
    await actor.load()
    first = sale("cashier:c", "s-1", "p-1")
    actor.submit_nowait(first)
    await run_until_answered(actor, [first])
    again = cage(store)
    await again.load()
    assert command_identity("cashier:c", "s-1") in again.applied
    assert command_identity("cashier:c", "s-2") not in again.applied


async def test_event_ids_are_derived_from_the_command(store: EventStore) -> None:
    """Event ids are SHA-256 of stream, sender, command id and index: a command applied
    twice would show as the same ids twice (casino-night verify reports them)."""
    from events.envelope import event_id

    actor = cage(store)
    await actor.load()
    subs = [sale("cashier:c", "s-1", "p-1"), sale("cashier:d", "s-1", "p-1")]
    for s in subs:
        actor.submit_nowait(s)
    await run_until_answered(actor, subs)
    events = await store.read("cage")
    assert [e.id for e in events] == [
        event_id(stream="cage", actor="cashier:c", causation="s-1", index=0),
        event_id(stream="cage", actor="cashier:d", causation="s-1", index=0),
    ]
    assert len({e.id for e in events}) == 2


async def test_a_retry_reaching_an_actor_before_its_reload_gets_the_stored_reply(
    store: EventStore,
) -> None:
    """A command applied by an earlier process (its answer lost, say) is retried at an
    actor that has not folded its stream yet: the reload finds it applied, and the retry
    is answered from its stored reply, not refused as ``already_applied``."""
    first = cage(store)
    await first.load()
    original = sale("cashier:c", "once", "p-1", 250)
    first.submit_nowait(original)
    await run_until_answered(first, [original])
    assert original.future.result()["ok"]
    later = cage(store)  # a restarted process: stale until its first batch reloads it
    retry = sale("cashier:c", "once", "p-1", 250)
    later.submit_nowait(retry)
    await run_until_answered(later, [retry])
    assert retry.future.result() == original.future.result()
    assert await store.balance("p-1") == 250
