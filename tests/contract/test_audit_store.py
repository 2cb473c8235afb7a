"""The audit on a real Redis (services/audit/engine.py, command.py): it reads the org log
only up to the head it found first, in pages, with the balances guarded at that moment;
each stream's own record is held against the log; it writes nothing; a command that cannot
run exits 2 before it touches the store."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import encode
from events.envelope import Envelope, event_id, seal
from services import cli
from services.audit.balances import BalanceChecker
from services.audit.command import audit
from services.audit.engine import Audit, read_log, snapshot, stream_heads
from services.store import keys
from services.store.redis_store import Appended, BalanceMove, CommandWrite, EventStore, pack_result
from tests.unit.audit.support import canonical, guarded_of, whole_night

NIGHT = Path(__file__).resolve().parents[2] / "examples" / "night.toml"


async def append(store: EventStore, stream: str, event: Event, n: int) -> Envelope:
    """One command's one event, appended as an actor does (stream, log, meta, balances)."""
    head = await store.head(stream)
    env = seal(
        event,
        id=event_id(stream=stream, actor="cashier:c", causation=f"c-{n}", index=0),
        stream=stream,
        seq=head.version + 1,
        ts=1_800_000_000_000 + n,
        actor="cashier:c",
        causation=f"c-{n}",
        correlation=None,
        prev_hash=head.last_hash,
    )
    sign = 1 if isinstance(event, ChipsIssued) else -1
    assert isinstance(event, ChipsIssued | ChipsRedeemed)
    write = CommandWrite(
        key=f"k-{n}",
        result=pack_result("fp", {"ok": True, "result": {}}),
        events=[env],
        moves=[BalanceMove(player=event.player, delta=sign * event.amount)],
    )
    got = await store.append(stream, head, [write])
    assert isinstance(got, Appended)
    return env.with_log_id(got.log_ids[0])


async def test_the_audit_reads_up_to_the_head_it_found_in_pages_and_writes_nothing(
    store: EventStore, redis_client: aioredis.Redis
) -> None:
    for n in range(7):
        await append(store, "cage", ChipsIssued(player=f"p-{n % 3}", amount=100 + n), n)
    moment = await snapshot(store)
    assert moment.length == 7 and moment.guarded == await store.balances()
    late = await append(store, "cage", ChipsRedeemed(player="p-0", amount=50), 99)
    before = {k: await redis_client.dump(k) for k in await redis_client.keys(f"*{store.org}*")}
    engine = Audit(store.org, [BalanceChecker(moment.guarded)])
    pages: list[int] = []
    await read_log(engine, store, moment.log_head, on_page=pages.append, page=3)
    report = engine.finish(also=await stream_heads(store, engine.chains.tips, moment.generated))
    assert report.ok, report.discrepancies
    assert pages == [3, 3, 1] and report.events == 7 and report.log_head == moment.log_head
    assert late.log_id is not None and report.log_head < late.log_id
    after = {k: await redis_client.dump(k) for k in await redis_client.keys(f"*{store.org}*")}
    assert after == before


async def test_a_stream_the_log_disagrees_with_is_named(
    store: EventStore, redis_client: aioredis.Redis
) -> None:
    first = await append(store, "cage", ChipsIssued(player="p-1", amount=100), 1)
    await append(store, "cage", ChipsIssued(player="p-1", amount=200), 2)
    other = await append(store, "other", ChipsIssued(player="p-2", amount=300), 3)
    # The cage's last event replaced in its stream behind the log's back; the other
    # stream's log copy deleted.
    [(_i, raw, log_id)] = await store.read_raw("cage", since=0, limit=1)
    assert log_id is not None
    cage = keys.stream(store.org, "cage")
    await redis_client.delete(cage)
    await redis_client.xadd(cage, {"e": raw, "l": log_id}, id="0-1")
    await redis_client.xadd(cage, {"e": encode(seal_again(first, amount=9)), "l": "x"}, id="0-2")
    assert other.log_id is not None
    await redis_client.xdel(keys.log(store.org), other.log_id)
    report = await audit(store, [], no_checkpoint=None)
    found = {(d.stream, d.seq): d.what for d in report.discrepancies}
    assert "not the log's copy" in found[("cage", 2)]
    assert "the org log does not hold it" in found[("other", 1)]
    # p-2's chips are gone from the log, not from the guarded balances.
    assert ("player:p-2", None) in found


def seal_again(env: Envelope, *, amount: int) -> Envelope:
    return seal(
        ChipsIssued(player="p-1", amount=amount),
        id=env.id,
        stream=env.stream,
        seq=2,
        ts=env.ts,
        actor=env.actor,
        causation=env.causation,
        correlation=None,
        prev_hash=env.hash,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--since", "yesterday"], "neither an ISO 8601"),
        (["--checkpoint", "/nonexistent/checkpoint.json"], "no checkpoint file"),
        (["--since", "2026-12-02", "--until", "2026-12-01"], "is not before --until"),
    ],
)
def test_a_command_that_cannot_run_exits_2(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", *args, "--night", str(NIGHT), "--data-dir", str(tmp_path)]
    assert cli.main(argv) == 2
    assert says in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written, no store started


@pytest.mark.parametrize(
    ("workers", "says"),
    [
        ("0", "0 is not from 1 to 8"),
        ("9", "9 is not from 1 to 8"),
        ("two", "'two' is not a whole number"),
    ],
)
def test_a_number_of_workers_out_of_range_exits_2(
    workers: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", "--workers", workers, "--night", str(NIGHT), "--data-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as stopped:  # argparse's own exit for a bad option
        cli.main(argv)
    assert stopped.value.code == 2
    assert f"argument --workers: {says}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_checkpoints_without_a_key_to_check_them_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "auditor" / "latest.json"
    checkpoint.parent.mkdir()
    checkpoint.write_text('{"body": {}, "signature": ""}\n')
    data = tmp_path / "data"
    argv = [
        "audit",
        "--checkpoint",
        str(checkpoint),
        "--night",
        str(NIGHT),
        "--data-dir",
        str(data),
    ]
    assert cli.main(argv) == 2
    assert "give --public-key" in capsys.readouterr().err
    assert not data.exists()


async def test_an_audit_while_events_are_appended_is_clean(store: EventStore) -> None:
    """Safe on a live store: the balances are those of the head it read, in one transaction,
    and the streams that moved on since are held only up to that head."""
    stop = asyncio.Event()
    started = asyncio.Event()

    async def cashier() -> int:
        n = 0
        while not stop.is_set():
            n += 1
            player = f"p-{n % 4}"
            await append(store, "cage", ChipsIssued(player=player, amount=10 + n), n)
            await append(store, f"other-{n % 3}", ChipsIssued(player=player, amount=n), -n)
            started.set()
        return n

    busy = asyncio.create_task(cashier())
    await asyncio.wait_for(started.wait(), 10)  # a busy machine may be slow to begin
    try:
        reports = []
        while len(reports) < 10:
            await asyncio.sleep(0.01)
            reports.append(await audit(store, [], no_checkpoint=None))
    finally:
        stop.set()
        appended = await busy
    assert all(r.ok for r in reports), [r.discrepancies for r in reports]
    assert reports[-1].events > reports[0].events > 0 and appended * 2 > reports[-1].events


async def test_a_pass_shared_among_processes_reports_what_one_process_does(
    redis_client: aioredis.Redis, org: str
) -> None:
    """``workers`` > 1: this process reads the log from a real Redis and deals two real
    processes their tables' entries; the report is the one process's, the tampering named
    by both (a bet's amount edited behind its hash, a cage event deleted from the log)."""
    log = whole_night()
    guarded = guarded_of(log)
    bets = [n for n, e in enumerate(log) if e.type == "BetPlaced"]
    edited = log[bets[len(bets) // 2]]
    log[bets[len(bets) // 2]] = dataclasses.replace(edited, data={**edited.data, "amount": 1})
    [gone] = [n for n, e in enumerate(log) if e.stream == "cage"][1:2]
    deleted = log.pop(gone)
    last: dict[str, Envelope] = {}
    for env in log:
        await redis_client.xadd(keys.log(org), {"e": encode(env)}, id=str(env.log_id))
        last[env.stream] = env
    for env in last.values():  # what the append script keeps beside the log
        await redis_client.hset(keys.meta(org, env.stream), mapping={"v": env.seq, "h": env.hash})
        await redis_client.xadd(keys.stream(org, env.stream), {"e": encode(env)}, id=f"0-{env.seq}")
        await redis_client.sadd(keys.streams(org), env.stream)
    await redis_client.hset(keys.balances(org), mapping=guarded)  # type: ignore[arg-type]
    store = EventStore(redis_client, org)
    one = await audit(store, [], no_checkpoint=None, workers=1)
    shared = await audit(store, [], no_checkpoint=None, workers=3)
    assert canonical(shared) == canonical(one)
    named = {(d.check, d.stream, d.seq) for d in one.discrepancies}
    assert ("chains", edited.stream, edited.seq) in named
    assert ("chains", "cage", deleted.seq) in named
    assert one.events == shared.events == len(log)
