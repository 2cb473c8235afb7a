"""Figure 16: the standalone verifier's rate (``tools/verify_export.py``), events/s.

A night of ~300,000 events (``--quick``: 60,000) as the rebuild figure makes it (roulette
rounds on 20 tables, chips sold; bench/rebuild.py), appended to a Redis org log, signed by a
checkpoint of every head, written by ``services.export.write_export`` (the export
``casino-night export`` writes), then checked by the verifier in a process of its own with
the venv's Python: every hash recomputed by its own msgpack encoder, every chain from
genesis, the checkpoint's signature and heads, the trailer's digest and signature, the
totals. The rate is the events over the verifier's wall time (its start-up included).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack
import redis.asyncio as aioredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench.common import ROOT, Result, at_least, own_redis, progress, unique_org
from bench.rebuild import fill, night_events
from services.export import write_export
from services.store import anchor
from services.store.redis_store import EventStore

VERIFIER = ROOT / "tools" / "verify_export.py"
TARGET = 20_000
"""Events/s the verifier should check at least, on one core: a night of a million events in
under a minute. Pure Python re-encodes every event (its own msgpack encoder) to hash it."""


def _heads(events: Iterator[bytes], heads: dict[str, tuple[int, str]]) -> Iterator[bytes]:
    """The events, passed on; each stream's last (seq, hash) kept in ``heads``."""
    for raw in events:
        f = msgpack.unpackb(raw, raw=False)
        heads[f[3]] = (f[4], f[10])
        yield raw


async def run(quick: bool) -> list[Result]:
    total = 60_000 if quick else 300_000
    key = Ed25519PrivateKey.generate()
    rates: list[float] = []
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix="cn-bench-export-") as tmp:
        client = aioredis.Redis.from_url(redis.url, decode_responses=False)
        try:
            org = unique_org("export")
            progress(f"export: filling the org log with ~{total:,} events")
            heads: dict[str, tuple[int, str]] = {}
            count = await fill(client, org, _heads(night_events(total), heads))
            store = EventStore(client, org)
            checkpoint = anchor.Checkpoint(
                organization=org,
                counter=1,
                time_ms=int(time.time() * 1000),
                reason="shutdown",
                log_id=await store.log_head(),
                streams=heads,
                key=anchor.fingerprint(key.public_key()),
            )
            out = Path(tmp) / "night.jsonl"
            started = time.perf_counter()
            with out.open("wb") as f:
                written = await write_export(
                    store,
                    f,
                    key=key,
                    checkpoints=[anchor.sign(key, checkpoint).strip()],
                    organization_name="bench",
                    occasion=None,
                    now_ms=int(time.time() * 1000),
                )
            write_s = time.perf_counter() - started
        finally:
            await client.aclose()
        if written.events != count:
            raise RuntimeError(f"exported {written.events} of {count} events")
        runs = 3
        for i in range(runs):
            progress(f"export: verify_export.py over {count:,} events, run {i + 1}/{runs}")
            started = time.perf_counter()
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-I", str(VERIFIER), str(out), "--json"],
                capture_output=True,
                text=True,
                check=False,
            )
            elapsed = time.perf_counter() - started
            if done.returncode != 0 or not json.loads(done.stdout)["ok"]:
                raise RuntimeError(f"the verifier refused the export: {done.stdout[-2000:]}")
            rates.append(count / elapsed)
        size = out.stat().st_size
    return [
        at_least(
            "16 standalone verifier (tools/verify_export.py) over an export",
            statistics.median(rates),
            "events/s",
            TARGET,
            note=f"{count:,} events, {size / 2**20:,.0f} MiB of JSON Lines written by"
            f" write_export in {write_s:.1f} s; median of {runs} runs of the verifier in its"
            f" own process: {', '.join(f'{r:,.0f}' for r in rates)}",
        ),
    ]
