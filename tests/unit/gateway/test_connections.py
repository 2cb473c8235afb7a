"""A principal's open connections, counted (services/gateway/connections.py), over real
loopback connections."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from services.gateway import connections as module
from services.gateway.connections import PrincipalConnections

A = ("player", "p-1")
B = ("player", "p-2")


@pytest.fixture
async def open_transports() -> AsyncIterator[list[asyncio.Transport]]:
    """Six client transports of real connections to a loopback server."""
    accepted: list[asyncio.StreamWriter] = []

    def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    writers = [(await asyncio.open_connection("127.0.0.1", port))[1] for _ in range(6)]
    yield [w.transport for w in writers]  # type: ignore[misc]
    for w in writers + accepted:
        w.close()
    for w in writers + accepted:
        with contextlib.suppress(ConnectionError):
            await w.wait_closed()
    server.close()
    await server.wait_closed()


async def test_a_principal_holds_at_most_its_limit_and_others_are_apart(
    open_transports: list[asyncio.Transport],
) -> None:
    conns = PrincipalConnections(limit=2)
    t1, t2, t3, t4 = open_transports[:4]
    assert conns.admit(A, t1) and conns.admit(A, t2)
    assert not conns.admit(A, t3)  # a third is refused, and not counted
    assert conns.held(A) == 2
    assert conns.admit(B, t3) and conns.admit(B, t4)  # another principal is not affected
    assert conns.admit(A, t1)  # a connection already held carries any number of requests
    assert conns.held(A) == 2


async def test_a_closed_connection_makes_room(open_transports: list[asyncio.Transport]) -> None:
    conns = PrincipalConnections(limit=2)
    t1, t2, t3 = open_transports[:3]
    assert conns.admit(A, t1) and conns.admit(A, t2)
    t1.close()
    assert conns.held(A) == 1
    assert conns.admit(A, t3)
    assert not conns.admit(A, open_transports[3])


async def test_principals_holding_nothing_are_swept(
    open_transports: list[asyncio.Transport], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``SWEEP_EVERY`` admissions the principals whose connections all closed are
    forgotten: memory follows the principals connected now."""
    monkeypatch.setattr(module, "SWEEP_EVERY", 4)
    conns = PrincipalConnections(limit=2)
    gone = [("player", f"gone-{i}") for i in range(3)]
    for key, t in zip(gone, open_transports[:3], strict=True):
        assert conns.admit(key, t)
        t.close()
    assert conns.admit(A, open_transports[3])  # the fourth admission sweeps
    assert set(conns._open) == {A}
