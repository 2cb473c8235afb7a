"""Projections read events through the event registry (events/codec.py ``fold_view``): a
stored event of an older version reaches them upcast to the current one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from events import base
from events.base import Data, Event
from events.codec import encode
from events.envelope import GENESIS_HASH, Envelope, chain_hash
from projections.runner import ProjectionRunner
from services.store import keys
from services.store.redis_store import EventStore

NAME = "TestOnlyTallied"


@dataclass(frozen=True, slots=True, kw_only=True)
class Tallied(Event):
    """Version 2 of a test-only event: ``cents`` (version 1 had ``dollars``)."""

    cents: int


def v1_to_v2(data: Data) -> Data:
    return {"cents": data["dollars"] * 100}


class Recorder:
    """A projection that keeps what it was handed."""

    name = "recorder"
    types = frozenset({NAME})

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any], int]] = []

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        self.seen.append((type_, stream, data, ts))

    def snapshot(self) -> dict[str, Any]:
        return {"seen": len(self.seen)}

    def restore(self, data: dict[str, Any]) -> None:
        self.seen = []


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test-only type in the real registry at version 2, with its upcaster from 1; both
    taken out again after the test."""
    Tallied.NAME = NAME
    Tallied.VERSION = 2
    monkeypatch.setitem(base._REGISTRY, NAME, Tallied)
    monkeypatch.setitem(base._UPCASTERS, (NAME, 1), v1_to_v2)


def stored(version: int, data: Data, seq: int) -> bytes:
    fields: dict[str, Any] = dict(
        id=f"{seq:032x}", type=NAME, version=version, stream="table:t", seq=seq, ts=1000 + seq,
        actor="dealer:d", causation=f"c-{seq}", correlation=None, prev_hash=GENESIS_HASH,
    )  # fmt: skip
    return encode(Envelope(**fields, hash=chain_hash(**fields, data=data), data=data))


async def test_a_projection_folds_an_old_event_upcast(registered: None, store: EventStore) -> None:
    log = keys.log(store.org)
    await store.redis.xadd(log, {"e": stored(1, {"dollars": 3}, 1)})
    await store.redis.xadd(log, {"e": stored(2, {"cents": 250}, 2)})
    recorder = Recorder()
    assert await ProjectionRunner(store, [recorder]).catch_up() == 2
    assert recorder.seen == [
        (NAME, "table:t", {"cents": 300}, 1001),  # written at version 1, upcast
        (NAME, "table:t", {"cents": 250}, 1002),  # current: as stored
    ]
