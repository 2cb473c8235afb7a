"""End-to-end fixtures: the real ``casino-night serve`` process over a temporary data dir."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.serve import EXE, ServeProcess, night_toml

ServeFactory = Callable[..., Awaitable[ServeProcess]]


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[ServeFactory]:
    """``await serve(org, tables, players)``: a started server; stopped (and any redis-server
    it left) at teardown."""
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: install the project into this venv (make install)")
    started: list[ServeProcess] = []

    async def factory(
        org: str, tables: Iterable[Mapping[str, Any]], players: Iterable[str]
    ) -> ServeProcess:
        server = ServeProcess(
            tmp_path / f"night-{len(started) + 1}", night_toml(org, tables, players)
        )
        started.append(server)
        await server.start()
        return server

    yield factory
    for server in started:
        await server.aclose()
