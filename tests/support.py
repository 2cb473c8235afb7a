"""Test helpers: a real server (in-process aiohttp on a TCP port, or the CLI process) and a
websocket client that sends commands and collects the events pushed to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from services.gateway.app import create_app
from services.gateway.auth import mint
from services.night import parse_night
from services.runtime import Runtime
from services.settings import Settings
from services.store.embedded import free_port

SECRET = b"test-secret"


def token(
    role: str,
    sub: str | None = None,
    *,
    ttl: int = 3600,
    secret: bytes = SECRET,
    tables: tuple[str, ...] = (),
    player: str | None = None,
) -> str:
    return mint(
        secret,
        role=role,
        sub=sub or role,
        ttl_seconds=ttl,
        now=int(time.time()),
        tables=tables,
        player=player,
    )


def player_token(player: str, secret: bytes = SECRET) -> str:
    return token("player", player, player=player, secret=secret)


def dealer_token(*tables: str, secret: bytes = SECRET) -> str:
    return token("dealer", "dealer-" + "-".join(tables), tables=tables, secret=secret)


class WsClient:
    """A real websocket client: ``cmd`` sends one command and waits for its reply."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.replies: dict[Any, dict[str, Any]] = {}
        self.views: list[dict[str, Any]] = []
        """Pushed projection views (``{"view", "key", "data"}``), in arrival order."""
        self.arrivals: list[tuple[str, Any]] = []
        """Every frame in arrival order: ("re", id) for replies, ("ev", (stream, seq))."""
        self._waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._event_signal = asyncio.Event()
        self.closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())
        self._ids = 0
        self._prefix = uuid.uuid4().hex[:12]
        """Command ids unique across clients and reconnects (the server keeps ids forever)."""

    async def _read(self) -> None:
        try:
            async for msg in self.ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                if "view" in data:
                    self.views.append(data)
                    self._event_signal.set()
                elif "ev" in data:
                    self.arrivals.append(("ev", (data["ev"]["stream"], data["ev"]["seq"])))
                    self.events.append(data["ev"])
                    self._event_signal.set()
                else:
                    self.arrivals.append(("re", data["re"]))
                    self.replies[data["re"]] = data
                    fut = self._waiters.pop(data["re"], None)
                    if fut is not None and not fut.done():
                        fut.set_result(data)
        finally:
            if not self.closed.done():
                self.closed.set_result(self.ws.close_code)
            for fut in self._waiters.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("websocket closed"))

    def next_id(self) -> str:
        self._ids += 1
        return f"c-{self._prefix}-{self._ids}"

    async def cmd(self, op: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        fields.setdefault("id", self.next_id())
        return await self.send({"op": op, **fields}, timeout=timeout)

    async def send(self, msg: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[msg.get("id")] = fut
        await self.ws.send_str(json.dumps(msg))
        return await asyncio.wait_for(fut, timeout)

    async def send_raw(self, text: str, timeout: float = 10.0) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[None] = fut
        await self.ws.send_str(text)
        return await asyncio.wait_for(fut, timeout)

    async def wait_events(
        self, stream: str, count: int, timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """Wait until ``count`` events of ``stream`` have arrived; return them."""
        deadline = time.monotonic() + timeout
        while True:
            got = [e for e in self.events if e["stream"] == stream]
            if len(got) >= count:
                return got
            self._event_signal.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{len(got)} of {count} events of {stream}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event_signal.wait(), remaining)

    async def wait_view(
        self, check: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """Wait for a pushed view whose data passes ``check``; return that data."""
        deadline = time.monotonic() + timeout
        while True:
            for pushed in self.views:
                if pushed["data"] is not None and check(pushed["data"]):
                    return dict(pushed["data"])
            self._event_signal.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching view among {len(self.views)} pushed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event_signal.wait(), remaining)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()


@dataclass
class LiveServer:
    """A real in-process server on a TCP port, with its runtime for inspection."""

    runtime: Runtime
    runner: web.AppRunner
    base: str
    session: aiohttp.ClientSession
    clients: list[WsClient] = field(default_factory=list)
    scratch: Path | None = None
    """A data directory made for this server alone (removed when it stops)."""

    async def connect(self, tok: str) -> WsClient:
        ws = await self.session.ws_connect(f"{self.base}/ws?token={tok}")
        client = WsClient(ws)
        self.clients.append(client)
        return client

    async def get(self, path: str, tok: str) -> tuple[int, Any]:
        async with self.session.get(
            self.base + path, headers={"Authorization": f"Bearer {tok}"}
        ) as r:
            return r.status, await r.json()

    async def post_command(self, msg: dict[str, Any], tok: str) -> tuple[int, Any]:
        async with self.session.post(
            self.base + "/api/commands", json=msg, headers={"Authorization": f"Bearer {tok}"}
        ) as r:
            return r.status, await r.json()

    async def stop(self) -> None:
        for c in self.clients:
            await c.close()
        await self.session.close()
        await self.runner.cleanup()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


async def start_server(redis_url: str, doc: dict[str, Any], **settings: Any) -> LiveServer:
    """A server on ``redis_url``; without a ``data_dir`` setting it gets a temporary one of
    its own (for its anchor key and checkpoints), removed when it stops."""
    night = parse_night(doc)
    scratch = None
    if "data_dir" not in settings:
        scratch = settings["data_dir"] = Path(tempfile.mkdtemp(prefix="cn-test-"))
    port = free_port()
    runtime = Runtime(
        settings=Settings(redis_url=redis_url, host="127.0.0.1", port=port, **settings),
        night=night,
        secret=SECRET,
    )
    runner = web.AppRunner(create_app(runtime))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return LiveServer(
        runtime, runner, f"http://127.0.0.1:{port}", aiohttp.ClientSession(), scratch=scratch
    )
