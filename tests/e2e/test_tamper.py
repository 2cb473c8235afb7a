"""Tampering with a stopped night's Redis is evident (issue 8, items 9-11).

One real night is served (``casino-night serve``) and stopped; each test works on a copy of
its data directory. The tamperer can write to Redis, not to the data directory: each attack
leaves the store consistent in every way Redis alone can check (chains, org log, meta,
balances), and ``casino-night verify`` (a real process) must still report it, with the
stream and seq, against the signed checkpoint the server wrote outside Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
import stat
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from events.cage import ChipsIssued
from events.codec import decode, encode
from events.envelope import Envelope, expected_hash, seal
from services.store import anchor, keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    EventStore,
    Head,
    pack_result,
)
from tests.e2e.serve import EXE, ServeProcess, night_toml

ORG = "e2e-tamper"
TABLES = [{"id": "roulette-1", "outcome_mode": "dealer", "options": {}}]
NIGHT = night_toml(ORG, TABLES, ["p-1", "p-2"])
BALANCES = {"p-1": 2000 - 100 - 500, "p-2": 1000}
"""What the night below leaves: p-1 buys 2000, loses a 100 bet, cashes out 500."""


async def _play(workdir: Path) -> None:
    server = ServeProcess(workdir, NIGHT)
    try:
        await server.start()
        cashier = await server.connect(server.token("cashier"))
        dealer = await server.connect(server.dealer_token("roulette-1"))
        player = await server.connect(server.player_token("p-1"))
        replies = [
            await cashier.cmd("buy_chips", player="p-1", amount=2000),  # cage seq 1
            await cashier.cmd("buy_chips", player="p-2", amount=1000),  # cage seq 2
            await dealer.cmd("open_round", table="roulette-1"),
            await player.cmd(
                "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=100
            ),
            await dealer.cmd("no_more_bets", table="roulette-1"),
            await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "0"}),
            await cashier.cmd("cash_out", player="p-1", amount=500),  # cage seq 3: the last
        ]
        assert all(r["ok"] for r in replies), replies
        await server.close_clients()
        assert await server.terminate() == 0
    finally:
        await server.aclose()


@pytest.fixture(scope="module")
def stopped_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directory of a night that was served and stopped (SIGTERM)."""
    workdir = tmp_path_factory.mktemp("tamper-night")
    asyncio.run(_play(workdir))
    return workdir / "data"


@pytest.fixture
def night(stopped_night: Path, tmp_path: Path) -> Iterator[ServeProcess]:
    """A copy of the stopped night, to tamper with, verify and serve again."""
    server = ServeProcess(tmp_path / "night", NIGHT)
    shutil.copytree(stopped_night, server.data_dir)
    yield server
    asyncio.run(server.aclose())


@contextlib.asynccontextmanager
async def redis_of(data_dir: Path) -> AsyncIterator[tuple[aioredis.Redis, EventStore]]:
    """The stopped night's Redis, as the tamperer reaches it."""
    embedded = EmbeddedRedis(data_dir / "redis")
    await asyncio.to_thread(embedded.start)
    client = aioredis.Redis.from_url(embedded.url)
    try:
        yield client, EventStore(client, ORG)
    finally:
        await client.aclose()
        await asyncio.to_thread(embedded.stop)


def latest(server: ServeProcess) -> Path:
    return anchor.checkpoint_dir(server.data_dir, ORG) / anchor.LATEST_FILE


async def verify(server: ServeProcess, *args: str) -> tuple[int, list[str]]:
    done = await server.cli("verify", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout.splitlines()


def line(lines: list[str], prefix: str) -> str:
    found = [x for x in lines if x.startswith(prefix)]
    assert len(found) == 1, (prefix, lines)
    return found[0]


async def test_a_clean_night_verifies_against_its_checkpoint_and_an_auditors_copy(
    night: ServeProcess, tmp_path: Path
) -> None:
    code, lines = await verify(night)
    assert code == 0, lines
    assert "BROKEN" not in "\n".join(lines)
    assert "(shutdown, key sha256:" in line(lines, "ok      anchor: checkpoint #")
    assert line(lines, "ok      commands: ").endswith("none applied twice")
    key_file = night.data_dir / anchor.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # The shutdown checkpoint signed the store's every head and the log's last entry.
    public = anchor.load_signing_key(key_file).public_key()
    signed = anchor.parse(latest(night).read_text(), public, ORG)
    async with redis_of(night.data_dir) as (_client, store):
        heads = {}
        for name in await store.stream_names():
            head = await store.head(name)
            heads[name] = (head.version, head.last_hash)
        assert dict(signed.streams) == heads and heads["cage"][0] == 3
        assert signed.log_id == await store.log_head()

    # What an auditor keeps: the public key and the exported checkpoint.
    keyout = await asyncio.to_thread(
        subprocess.run,
        [str(EXE), "anchor-key", "--data-dir", str(night.data_dir)],
        env=night.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert keyout.returncode == 0, keyout.stderr
    assert keyout.stdout.startswith("-----BEGIN PUBLIC KEY-----")
    assert f"fingerprint: {signed.key}" in keyout.stdout
    pub = tmp_path / "anchor.pub"
    pub.write_text(keyout.stdout)
    export = tmp_path / "checkpoint.json"
    exported = await night.cli("checkpoint", "--out", str(export))
    assert exported.returncode == 0, exported.stderr
    assert f"checkpoint #{signed.counter} of" in exported.stdout
    # The auditor checks a copy of the AOF alone: without the export, nothing vouches.
    copy = ServeProcess(tmp_path / "audit", NIGHT)
    (copy.data_dir / "redis").mkdir(parents=True)
    shutil.copy(night.data_dir / "redis" / "appendonly.aof", copy.data_dir / "redis")
    code, lines = await verify(copy)
    assert code == 1
    assert "no signed checkpoint of e2e-tamper" in line(lines, "BROKEN  anchor: ")
    code, lines = await verify(copy, "--checkpoint", str(export), "--public-key", str(pub))
    assert code == 0, lines
    assert line(lines, "ok      anchor: ").startswith(
        f"ok      anchor: checkpoint #{signed.counter}"
    )
    # An edited copy (say, a shorter cage signed) is refused.
    doc = json.loads(export.read_text())
    doc["body"]["streams"]["cage"]["seq"] = 2
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    code, lines = await verify(copy, "--checkpoint", str(forged), "--public-key", str(pub))
    assert code == 1
    assert "forged or edited" in line(lines, "BROKEN  anchor: ")
    # So is the data directory's own, edited in place.
    latest(night).write_text(json.dumps(doc))
    code, lines = await verify(night)
    assert code == 1 and "forged or edited" in line(lines, "BROKEN  anchor: ")


async def test_a_deleted_cash_out_is_broken_and_the_server_will_not_sign_over_it(
    night: ServeProcess,
) -> None:
    """(a): the last event of the cage (p-1's $5 cash-out) deleted, its meta rolled back,
    its log copy deleted and the guarded balance given back."""
    async with redis_of(night.data_dir) as (client, store):
        [(_e, raw, log_id)] = await store.read_raw("cage", since=2, limit=1)
        redeemed = decode(raw)
        assert redeemed.type == "ChipsRedeemed" and redeemed.seq == 3
        await client.xdel(keys.stream(ORG, "cage"), "0-3")
        await client.xdel(keys.log(ORG), log_id)
        await client.hset(keys.meta(ORG, "cage"), mapping={"v": 2, "h": redeemed.prev_hash})
        await client.hincrby(keys.balances(ORG), "p-1", 500)
    code, lines = await verify(night)
    assert code == 1
    cage = line(lines, "BROKEN  cage: ")
    assert cage.startswith("BROKEN  cage: first break at seq 3: the stream ends at seq 2")
    assert "log entry" in line(lines, "BROKEN  anchor: ")  # the log's last entry is gone too
    # Everything Redis alone can say still agrees: only the anchor tells.
    assert line(lines, "ok      log: ") and line(lines, "ok      balances: ")
    # The next night does not start over it (it would sign the loss as the truth).
    with pytest.raises(RuntimeError, match="exited with 2"):
        await night.start()
    assert "no longer holds what" in night.stderr_text()


async def test_a_consistent_rewrite_of_a_chip_sale_is_broken(night: ServeProcess) -> None:
    """(b): ChipsIssued 2000 -> 200000 with the chain, log copies, meta and balance redone."""
    async with redis_of(night.data_dir) as (client, store):
        envs = await store.read_all("cage")
        assert envs[0].type == "ChipsIssued" and envs[0].data["amount"] == 2000
        rewritten: list[Envelope] = []
        prev = envs[0].prev_hash
        for env in envs:
            data = dict(env.data, amount=200_000) if env.seq == 1 else env.data
            new = dataclasses.replace(env, data=data, prev_hash=prev, hash="")
            new = dataclasses.replace(new, hash=expected_hash(new))
            rewritten.append(new)
            prev = new.hash
        copies = {env.log_id: new for env, new in zip(envs, rewritten, strict=True)}
        log_entries = await store.log_raw("0", 100_000)
        pipe = client.pipeline(transaction=True)
        pipe.delete(keys.stream(ORG, "cage"), keys.log(ORG))
        for env, new in zip(envs, rewritten, strict=True):
            assert env.log_id is not None
            fields = {"e": encode(new), "l": env.log_id}
            pipe.xadd(keys.stream(ORG, "cage"), fields, id=f"0-{new.seq}")  # type: ignore[arg-type]
        for log_id, raw in log_entries:
            payload = encode(copies[log_id]) if log_id in copies else raw
            pipe.xadd(keys.log(ORG), {"e": payload}, id=log_id)
        pipe.hset(keys.meta(ORG, "cage"), mapping={"v": len(rewritten), "h": prev})
        pipe.hincrby(keys.balances(ORG), "p-1", 198_000)
        await pipe.execute()
    code, lines = await verify(night)
    assert code == 1
    cage = line(lines, "BROKEN  cage: ")
    assert cage.startswith("BROKEN  cage: first break at seq 3: the event at seq 3 is not the one")
    assert "cage" in line(lines, "BROKEN  anchor: ")
    assert line(lines, "ok      log: ") and line(lines, "ok      balances: ")


async def test_a_chip_sale_applied_a_second_time_is_reported(night: ServeProcess) -> None:
    """(c): p-2's chip sale (cage seq 2) applied again after the cash-out, as a retry finds
    it when its idempotency record is gone: same actor and command id, a new key."""
    async with redis_of(night.data_dir) as (_client, store):
        [(_e, raw, _l)] = await store.read_raw("cage", since=1, limit=1)
        sale = decode(raw)
        head = await store.head("cage")
        again = seal(
            ChipsIssued(player="p-2", amount=1000),
            id=uuid.uuid4().hex,
            stream="cage",
            seq=head.version + 1,
            ts=sale.ts + 60_000,
            actor=sale.actor,
            causation=sale.causation,
            correlation=None,
            prev_hash=head.last_hash,
        )
        write = CommandWrite(
            key=f"lost-record-{uuid.uuid4().hex}",
            result=pack_result("fp", {"ok": True, "result": {}}),
            events=[again],
            moves=[BalanceMove(player="p-2", delta=1000)],
        )
        assert isinstance(await store.append("cage", head, [write]), Appended)
        assert Head(again.seq, again.hash) == await store.head("cage")
    code, lines = await verify(night)
    assert code == 1
    assert line(lines, "BROKEN  commands: ") == (
        f"BROKEN  commands: cage seq 4: command {sale.causation!r} of {sale.actor} applied "
        "again; its first events are at cage seq 2"
    )
    # Chains, log, anchor (it came after the checkpoint) and balances are all fine.
    assert "BROKEN  cage" not in "\n".join(lines)
    assert line(lines, "ok      anchor: ") and line(lines, "ok      balances: ")


async def test_an_edited_projection_checkpoint_is_refused_and_the_log_refolded(
    night: ServeProcess,
) -> None:
    """(d): the projection checkpoint edited to make p-1 richer; after a restart the server
    serves the balances the events give and logs the rejection."""
    async with redis_of(night.data_dir) as (client, _store):
        key = keys.projection(ORG, "runner")
        outer: dict[str, Any] = msgpack.unpackb(await client.get(key), raw=False)
        body = msgpack.unpackb(outer["body"], raw=False)
        assert body["states"]["bankrolls"]["players"]["p-1"]["balance"] == BALANCES["p-1"]
        body["states"]["bankrolls"]["players"]["p-1"]["balance"] += 100_000
        outer["body"] = msgpack.packb(body, use_bin_type=True)
        await client.set(key, msgpack.packb(outer, use_bin_type=True))
    await night.start()
    await night.wait_ready()
    status, got = await night.get("/api/bankrolls/players/p-1", night.token("auditor"))
    assert status == 200 and got["balance"] == BALANCES["p-1"]
    assert await night.store_balances(ORG) == BALANCES
    logs = [json.loads(x) for x in night.stderr_text().splitlines() if x.startswith("{")]
    [rejected] = [e for e in logs if e["event"] == "projection_checkpoint_rejected"]
    assert rejected["level"] == "error" and rejected["reason"] == "bad MAC"
    await night.close_clients()
    assert await night.terminate() == 0


# `casino-night audit` (issue 14): the same night, each kind of tampering named by stream
# and seq in the report, from the org log and the signed checkpoints.


async def audit(server: ServeProcess, out: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``casino-night audit`` on the stopped night; its exit status and audit.json."""
    done = await server.cli("audit", "--no-progress", "--out", str(out), *args)
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads((out / "audit.json").read_text())
    assert (out / "audit.md").read_text() == done.stdout
    return done.returncode, report


def named(report: dict[str, Any]) -> set[tuple[str, str, int | None]]:
    """(check, stream, seq) of every discrepancy."""
    return {(d["check"], d["stream"], d["seq"]) for d in report["discrepancies"]}


async def rewrite_log(data_dir: Path, edit: Any) -> None:
    """Replace the org log (same entry ids) with ``edit(entries)``; streams untouched."""
    async with redis_of(data_dir) as (client, store):
        entries = await store.log_raw("0", 100_000)
        edited = edit([(i, decode(raw, i)) for i, raw in entries])
        pipe = client.pipeline(transaction=True)
        pipe.delete(keys.log(ORG))
        for log_id, env in edited:
            pipe.xadd(keys.log(ORG), {"e": encode(env)}, id=log_id)
        await pipe.execute()


def _settled(entries: list[tuple[str, Envelope]]) -> int:
    [at] = [n for n, (_i, env) in enumerate(entries) if env.type == "Settled"]
    return at


async def test_an_edited_payout_not_rehashed_is_named(night: ServeProcess, tmp_path: Path) -> None:
    def edit(entries: list[tuple[str, Envelope]]) -> list[tuple[str, Envelope]]:
        at = _settled(entries)
        log_id, env = entries[at]
        [s] = env.data["settlements"]
        paid = dict(env.data, settlements=[dict(s, paid=200, result="won")], paid=200)
        entries[at] = (log_id, dataclasses.replace(env, data=paid))
        return entries

    await rewrite_log(night.data_dir, edit)
    code, report = await audit(night, tmp_path)
    assert code == 1
    found = {(d["stream"], d["seq"]): d for d in report["discrepancies"] if d["check"] == "chains"}
    [(stream, seq)] = list(found)
    assert stream == "table:roulette-1" and "altered" in found[(stream, seq)]["what"]
    async with redis_of(night.data_dir) as (_c, store):
        [settled] = [e for e in await store.read_all(stream) if e.type == "Settled"]
    assert seq == settled.seq and found[(stream, seq)]["found"] == settled.hash
    # The chips paid that the log now shows are not those the store guards.
    [balance] = [d for d in report["discrepancies"] if d["check"] == "balances"]
    assert (balance["stream"], balance["expected"], balance["found"]) == (
        "player:p-1",
        BALANCES["p-1"] + 200,
        BALANCES["p-1"],
    )


async def test_an_edited_payout_rehashed_is_named_by_the_checkpoint(
    night: ServeProcess, tmp_path: Path
) -> None:
    settled_at: list[tuple[str, int]] = []

    def edit(entries: list[tuple[str, Envelope]]) -> list[tuple[str, Envelope]]:
        at = _settled(entries)
        log_id, env = entries[at]
        [s] = env.data["settlements"]
        paid = dict(env.data, settlements=[dict(s, paid=200, result="won")], paid=200)
        new = dataclasses.replace(env, data=paid)
        entries[at] = (log_id, dataclasses.replace(new, hash=expected_hash(new)))
        settled_at.append((env.stream, env.seq))
        return entries

    await rewrite_log(night.data_dir, edit)
    code, report = await audit(night, tmp_path)
    assert code == 1
    # Its hash recomputes, but it is not the event the checkpoints signed at that seq, and
    # the stream's own copy differs from the log's.
    assert ("checkpoints", *settled_at[0]) in named(report)
    assert ("chains", *settled_at[0]) in named(report)


async def test_a_deleted_bet_is_named(night: ServeProcess, tmp_path: Path) -> None:
    gone: list[tuple[str, int]] = []

    def edit(entries: list[tuple[str, Envelope]]) -> list[tuple[str, Envelope]]:
        [at] = [n for n, (_i, env) in enumerate(entries) if env.type == "BetPlaced"]
        gone.append((entries[at][1].stream, entries[at][1].seq))
        return entries[:at] + entries[at + 1 :]

    await rewrite_log(night.data_dir, edit)
    code, report = await audit(night, tmp_path)
    assert code == 1
    [missing] = [d for d in report["discrepancies"] if (d["stream"], d["seq"]) == gone[0]]
    assert missing["check"] == "chains" and "missing from the log" in missing["what"]


async def test_reordered_events_are_named(night: ServeProcess, tmp_path: Path) -> None:
    swapped: list[tuple[str, int]] = []

    def edit(entries: list[tuple[str, Envelope]]) -> list[tuple[str, Envelope]]:
        at = _settled(entries)
        (a_id, a), (b_id, b) = entries[at - 1], entries[at]
        assert a.stream == b.stream and a.seq + 1 == b.seq
        swapped.append((a.stream, a.seq))
        entries[at - 1], entries[at] = (a_id, b), (b_id, a)
        return entries

    await rewrite_log(night.data_dir, edit)
    code, report = await audit(night, tmp_path)
    assert code == 1
    at = [d for d in report["discrepancies"] if (d["stream"], d["seq"]) == swapped[0]]
    # The chain names it; a rule checker fed the log in its (wrong) order may name it too.
    [late] = [d for d in at if d["check"] == "chains"]
    assert "out of order" in late["what"]


async def test_a_forged_checkpoint_is_named(night: ServeProcess, tmp_path: Path) -> None:
    doc = json.loads(latest(night).read_text())
    doc["body"]["streams"]["cage"]["seq"] = 2  # a shorter cage "signed"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    code, report = await audit(night, tmp_path / "out", "--checkpoint", str(forged))
    assert code == 1
    [problem] = [d for d in report["discrepancies"] if d["stream"] == "checkpoints"]
    assert "forged or edited" in problem["what"]
    # What it claims is compared all the same: cage seq 2's hash is not the one it names.
    assert ("checkpoints", "cage", 2) in named(report)


async def test_an_occasion_the_log_never_started_cannot_be_audited(
    night: ServeProcess, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = await night.cli("audit", "--no-progress", "--occasion", "nope", "--out", str(out))
    assert done.returncode == 2 and done.stdout == ""
    assert "the log started no occasion nope (it started: e2e-night)" in done.stderr
    assert not out.exists()
