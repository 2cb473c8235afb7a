"""Signed checkpoints outside Redis (services/store/anchor.py) against a real Redis: what
they sign, that an edited or foreign one is refused, that the server refreshes one while
events flow and writes one at shutdown, and that every way of rewriting signed history is
reported with its stream and seq."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import stat
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import decode, encode
from events.envelope import expected_hash
from services.store import anchor, keys
from services.store.anchor import (
    Anchor,
    AnchorError,
    CheckpointError,
    CheckpointFiles,
    check_anchor,
    ensure_signing_key,
    parse,
)
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import EventStore, Head
from services.store.verify import verify_all
from tests.conftest import night_doc
from tests.contract.test_event_store import fill
from tests.support import start_server, token


def files(tmp_path: Path, org: str) -> CheckpointFiles:
    return CheckpointFiles(anchor.checkpoint_dir(tmp_path, org))


async def store_heads(store: EventStore) -> dict[str, tuple[int, str]]:
    heads = {}
    for name in await store.stream_names():
        head = await store.head(name)
        heads[name] = (head.version, head.last_hash)
    return heads


async def night_store(store: EventStore) -> None:
    """Three streams with a few events each."""
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=2000)] * 3)
    await fill(store, "cage", [ChipsRedeemed(player="p-1", amount=500)])
    await fill(store, "table:a", [ChipsIssued(player="p-2", amount=n) for n in (1, 2, 3)])
    await fill(store, "license", [ChipsIssued(player="p-3", amount=7)])


async def signed(store: EventStore, tmp_path: Path) -> tuple[Anchor, anchor.Checkpoint]:
    key = ensure_signing_key(tmp_path, None)
    a = Anchor(store, key, files(tmp_path, store.org))
    await a.open()
    cp = await a.sign("shutdown", force=True)
    assert cp is not None
    return a, cp


async def verify_against(store: EventStore, cp: anchor.Checkpoint) -> anchor.AnchorReport:
    reports = await verify_all(store, also=cp.streams)
    return await check_anchor(store, cp, reports)


def test_the_key_is_created_once_with_mode_0600_and_a_given_one_is_used(tmp_path: Path) -> None:
    key = ensure_signing_key(tmp_path, None)
    path = tmp_path / anchor.KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = ensure_signing_key(tmp_path, None)
    assert anchor.fingerprint(again.public_key()) == anchor.fingerprint(key.public_key())
    other = Ed25519PrivateKey.generate()
    given = tmp_path / "elsewhere.pem"
    given.write_bytes(
        other.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    used = ensure_signing_key(tmp_path / "fresh", given)
    assert anchor.fingerprint(used.public_key()) == anchor.fingerprint(other.public_key())
    assert not (tmp_path / "fresh" / anchor.KEY_FILE).exists()  # a given key: none is made
    with pytest.raises(AnchorError, match="no anchor key"):
        ensure_signing_key(tmp_path, tmp_path / "missing.pem")
    # The public key as `anchor-key` prints it (with its fingerprint line) reads back.
    printed = tmp_path / "anchor.pub"
    printed.write_text(
        anchor.public_pem(key.public_key())
        + f"fingerprint: {anchor.fingerprint(key.public_key())}\n"
    )
    assert anchor.fingerprint(anchor.load_public_key(printed)) == anchor.fingerprint(
        key.public_key()
    )


async def test_a_checkpoint_signs_every_head_and_an_edited_or_foreign_one_is_refused(
    store: EventStore, tmp_path: Path
) -> None:
    await night_store(store)
    a, cp = await signed(store, tmp_path)
    assert dict(cp.streams) == await store_heads(store)
    assert cp.log_id == await store.log_head() and cp.organization == store.org
    assert cp.counter == 1 and cp.reason == "shutdown"
    text = a.files.latest.read_text()
    public = a.key.public_key()
    assert parse(text, public, store.org) == cp

    doc = json.loads(text)
    doc["body"]["streams"]["cage"]["seq"] = 3  # pretend less was signed
    with pytest.raises(CheckpointError, match="forged or edited"):
        parse(json.dumps(doc), public, store.org)
    doc = json.loads(text)
    doc["body"]["time"] += 1
    with pytest.raises(CheckpointError, match="forged or edited"):
        parse(json.dumps(doc, indent=2), public, store.org)
    # Reformatting the file (an editor, a JSON tool) changes nothing signed.
    assert parse(json.dumps(json.loads(text), indent=4), public, store.org) == cp
    # Signed by another key: named as such.
    forged = anchor.sign(Ed25519PrivateKey.generate(), cp)
    with pytest.raises(CheckpointError, match="does not verify"):
        parse(forged, public, store.org)
    with pytest.raises(CheckpointError, match="organization"):
        parse(text, public, "another-org")
    with pytest.raises(CheckpointError, match="not a signed checkpoint"):
        parse("{}", public, store.org)


async def test_the_intact_store_verifies_against_its_checkpoint(
    store: EventStore, tmp_path: Path
) -> None:
    await night_store(store)
    _a, cp = await signed(store, tmp_path)
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=1)])  # after it: unpinned
    report = await verify_against(store, cp)
    assert report.ok, report
    assert report.line().startswith("ok      anchor: checkpoint #1 of ")


async def test_truncating_a_signed_stream_is_broken_at_the_first_missing_seq(
    store: EventStore, tmp_path: Path, redis_client: aioredis.Redis
) -> None:
    await night_store(store)
    _a, cp = await signed(store, tmp_path)
    org = store.org
    # Drop cage seq 4 cleanly: entry, its log copy, the meta rolled back to seq 3.
    [(_e, _raw, log_id)] = await store.read_raw("cage", since=3, limit=1)
    [(_e3, raw3, _l3)] = await store.read_raw("cage", since=2, limit=1)
    await redis_client.xdel(keys.stream(org, "cage"), "0-4")
    await redis_client.xdel(keys.log(org), log_id)
    await redis_client.hset(keys.meta(org, "cage"), mapping={"v": 3, "h": decode(raw3).hash})
    assert all(r.ok for r in await verify_all(store))  # the chains alone see nothing
    report = await verify_against(store, cp)
    assert not report.ok
    [b] = [b for b in report.breaks if b.stream == "cage"]
    assert b.seq == 4 and "ends at seq 3" in b.reason and "signed seq 4" in b.reason
    assert "cage" in report.line() and report.line().startswith("BROKEN  anchor:")


async def test_a_consistent_rewrite_before_the_checkpoint_is_broken_at_the_signed_seq(
    store: EventStore, tmp_path: Path, redis_client: aioredis.Redis
) -> None:
    await night_store(store)
    _a, cp = await signed(store, tmp_path)
    org = store.org
    envs = await store.read_all("table:a")
    # Rewrite seq 1 and recompute every later link, the stream, its log copies and meta.
    rewritten = []
    prev = envs[0].prev_hash
    for env in envs:
        data = dict(env.data)
        if env.seq == 1:
            data["amount"] = 100_000
        new = dataclasses.replace(env, data=data, prev_hash=prev, hash="")
        new = dataclasses.replace(new, hash=expected_hash(new))
        rewritten.append(new)
        prev = new.hash
    by_log = {env.log_id: new for env, new in zip(envs, rewritten, strict=True)}
    log_entries = await store.log_raw("0", 10_000)
    pipe = redis_client.pipeline(transaction=True)
    pipe.delete(keys.stream(org, "table:a"), keys.log(org))
    for env, new in zip(envs, rewritten, strict=True):
        assert env.log_id is not None
        pipe.xadd(
            keys.stream(org, "table:a"), {"e": encode(new), "l": env.log_id}, id=f"0-{new.seq}"
        )
    for log_id, raw in log_entries:
        pipe.xadd(
            keys.log(org), {"e": encode(by_log[log_id]) if log_id in by_log else raw}, id=log_id
        )
    pipe.hset(keys.meta(org, "table:a"), mapping={"v": len(rewritten), "h": prev})
    await pipe.execute()
    assert all(r.ok for r in await verify_all(store))  # a consistent rewrite: chains intact
    report = await verify_against(store, cp)
    [b] = report.breaks
    assert (b.stream, b.seq) == ("table:a", 3)
    assert "is not the one checkpoint #1" in b.reason


async def test_a_stream_dropped_from_the_stream_set_and_a_deleted_log_entry_are_broken(
    store: EventStore, tmp_path: Path, redis_client: aioredis.Redis
) -> None:
    await night_store(store)
    _a, cp = await signed(store, tmp_path)
    org = store.org
    # Hide a whole stream: delete it with its meta and set entry and its log copies.
    names = {env.log_id for env in await store.read_all("license")}
    await redis_client.delete(keys.stream(org, "license"), keys.meta(org, "license"))
    await redis_client.srem(keys.streams(org), "license")
    await redis_client.xdel(keys.log(org), *names)
    assert all(r.ok for r in await verify_all(store))
    report = await verify_against(store, cp)
    [b, gone] = report.breaks
    assert (b.stream, b.seq) == ("license", 1) and "the stream is gone" in b.reason
    # Its event was the log's last entry, which the checkpoint signed: gone too.
    assert gone.stream == "log" and cp.log_id in gone.reason
    assert f"log entry {cp.log_id}" in report.line()


async def test_the_server_refuses_a_store_that_no_longer_extends_its_checkpoint(
    store: EventStore, tmp_path: Path, redis_client: aioredis.Redis
) -> None:
    await night_store(store)
    a, _cp = await signed(store, tmp_path)
    # The next start reads it back, checks it, and carries its counter on.
    b = Anchor(store, a.key, a.files)
    await b.open()
    cp2 = await b.sign("start", force=True)
    assert cp2 is not None and cp2.counter == 2
    await redis_client.hset(keys.meta(store.org, "table:a"), "v", 2)  # rolled back
    with pytest.raises(AnchorError, match=r"table:a seq 3"):
        await Anchor(store, a.key, a.files).open()
    # A checkpoint file signed by another key is refused as well.
    stranger = Anchor(store, Ed25519PrivateKey.generate(), a.files)
    with pytest.raises(AnchorError, match="does not verify"):
        await stranger.open()


async def test_signing_only_when_a_head_moved_and_history_at_most_once_a_minute(
    store: EventStore, tmp_path: Path
) -> None:
    key = ensure_signing_key(tmp_path, None)
    a = Anchor(store, key, files(tmp_path, store.org))
    a.files.directory.mkdir(parents=True)
    leftover = a.files.directory / ".latest.json.999.tmp"  # of a process killed mid-write
    leftover.write_text("half a checkpoint")
    await a.open()
    assert not leftover.exists()
    assert (await a.sign("start", force=True)) is not None  # an empty store: no streams
    assert await a.sign("interval") is None  # nothing moved
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=5)])
    heads: dict[str, Head] = {"cage": await store.head("cage")}
    a.attach(lambda: heads)
    moved = await a.sign("interval")
    assert moved is not None and moved.streams["cage"][0] == 1
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=6)])
    heads["cage"] = await store.head("cage")
    assert (await a.sign("interval")) is not None
    await a.sign("shutdown", force=True)
    latest = parse(a.files.latest.read_text(), key.public_key(), store.org)
    assert latest.counter == 4 and latest.streams["cage"][0] == 2

    def reasons() -> list[str]:
        lines = a.files.history.read_text().splitlines()
        return [json.loads(x)["body"]["reason"] for x in lines]

    # Start and shutdown always; the interval ones came within a minute of the start line.
    assert reasons() == ["start", "shutdown"]
    b = Anchor(store, key, a.files, history_every=0.0)
    await b.open()
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=7)])
    b.attach(lambda: {"cage": heads["cage"]})
    heads["cage"] = await store.head("cage")
    assert (await b.sign("interval")) is not None
    assert reasons() == ["start", "shutdown", "interval"]


async def test_the_occasion_end_is_signed_when_the_server_runs_then(
    store: EventStore, tmp_path: Path
) -> None:
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=5)])
    key = ensure_signing_key(tmp_path, None)
    ends = time.time_ns() // 1_000_000 + 300
    a = Anchor(store, key, files(tmp_path, store.org), every=60.0, occasion_ends_at=ends)
    await a.open()
    task = asyncio.create_task(a.run())

    def last_history_reason() -> str | None:
        if not a.files.history.exists():
            return None
        lines = a.files.history.read_text().splitlines()
        return json.loads(lines[-1])["body"]["reason"] if lines else None

    try:
        # The checkpoint is the anchor's as it is signed; its files are written by a thread
        # just after: wait for the history's line too.
        for _ in range(1000):
            latest = a.latest
            if latest is not None and latest.reason == "occasion_end" == last_history_reason():
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
    assert a.latest is not None and a.latest.reason == "occasion_end"
    assert a.latest.time_ms >= ends
    assert last_history_reason() == "occasion_end"


async def test_the_server_refreshes_its_checkpoint_while_events_flow_and_at_shutdown(
    redis_server: EmbeddedRedis, org: str, tmp_path: Path
) -> None:
    server = await start_server(redis_server.url, night_doc(org), data_dir=tmp_path)
    latest = anchor.checkpoint_dir(tmp_path, org) / anchor.LATEST_FILE
    key = anchor.load_signing_key(tmp_path / anchor.KEY_FILE).public_key()
    assert stat.S_IMODE((tmp_path / anchor.KEY_FILE).stat().st_mode) == 0o600
    try:
        first = parse(latest.read_text(), key, org)
        assert first.reason == "start" and "cage" not in first.streams
        assert first.streams["table:roulette-1"][0] == 1  # TableOpened, by the start
        cashier = await server.connect(token("cashier"))
        for amount in (100, 200, 300):
            assert (await cashier.cmd("buy_chips", player="p-1", amount=amount))["ok"]
        cage = server.runtime.supervisor.actors["cage"].head
        # While the server runs, a checkpoint with the cage's new head is written.
        for _ in range(1000):
            now = parse(latest.read_text(), key, org)
            if now.streams.get("cage") == (cage.version, cage.last_hash):
                break
            await asyncio.sleep(0.01)
        assert now.reason == "interval" and now.counter > first.counter
        assert now.streams["cage"] == (3, cage.last_hash)
        assert (await cashier.cmd("buy_chips", player="p-2", amount=400))["ok"]
    finally:
        await server.stop()
    # At shutdown: every head of the store as it was left, and the log's last id.
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        store = EventStore(client, org)
        last = parse(latest.read_text(), key, org)
        heads = await store_heads(store)
        assert last.reason == "shutdown"
        assert dict(last.streams) == heads and heads["cage"][0] == 4
        assert last.log_id == await store.log_head()
    finally:
        await client.aclose()
