"""Test helpers: a real server (in-process aiohttp on a TCP port, or the CLI process) and a
websocket client that sends commands and collects the events pushed to it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import redis.asyncio as aioredis
from aiohttp import web

from services.actor import Actor, Submission
from services.gateway.app import app_runner, create_app
from services.gateway.auth import mint
from services.night import parse_night
from services.runtime import Runtime
from services.settings import Settings
from services.store.access import acl_rules
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


async def start_server(
    redis_url: str, doc: dict[str, Any], *, secret: bytes = SECRET, **settings: Any
) -> LiveServer:
    """A server on ``redis_url`` with the server ``secret``; without a ``data_dir`` setting
    it gets a temporary one of its own (for its anchor key and checkpoints), removed when it
    stops."""
    night = parse_night(doc)
    scratch = None
    if "data_dir" not in settings:
        scratch = settings["data_dir"] = Path(tempfile.mkdtemp(prefix="cn-test-"))
    port = free_port()
    runtime = Runtime(
        settings=Settings(redis_url=redis_url, host="127.0.0.1", port=port, **settings),
        night=night,
        secret=secret,
    )
    runner = app_runner(create_app(runtime), runtime.settings)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return LiveServer(
        runtime, runner, f"http://127.0.0.1:{port}", aiohttp.ClientSession(), scratch=scratch
    )


class StuckClient(asyncio.Protocol):
    """A hostile websocket client that sends and never reads: after the handshake it stops
    reading its socket (``pause_reading``) with a small receive buffer, so whatever the
    server sends piles up on the server's side."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.upgraded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._head = bytearray()

    @classmethod
    async def connect(cls, port: int, tok: str) -> StuckClient:
        import socket

        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", port))
        _t, proto = await loop.create_connection(cls, sock=sock)
        assert proto.transport is not None
        proto.transport.write(
            (
                f"GET /ws?token={tok} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        await asyncio.wait_for(proto.upgraded, 10)
        return proto

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.upgraded.done():
            return
        self._head += data
        if b"\r\n\r\n" in self._head:
            if not self._head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(self._head.decode(errors="replace")))
                return
            self.upgraded.set_result(None)
            assert self.transport is not None
            self.transport.pause_reading()  # from now on, read nothing

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError("lost before the upgrade"))

    def send(self, msg: dict[str, Any] | str) -> None:
        """One masked text frame (RFC 6455 5.2), written at once."""
        self.send_all([msg])

    def send_all(self, msgs: list[dict[str, Any] | str]) -> None:
        """Masked text frames, all in one write (they reach the server together)."""
        assert self.transport is not None
        self.transport.write(b"".join(self._frame(msg) for msg in msgs))

    @staticmethod
    def _frame(msg: dict[str, Any] | str) -> bytes:
        text = msg if isinstance(msg, str) else json.dumps(msg)
        payload = text.encode("utf-8", errors="surrogatepass")
        n = len(payload)
        if n < 126:
            header = bytes((0x81, 0x80 | n))
        elif n < 65_536:
            header = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((0x81, 0x80 | 127)) + n.to_bytes(8, "big")
        mask = b"\x00\x00\x00\x00"  # a zero mask leaves the payload as it is
        return header + mask + payload

    @property
    def closed(self) -> bool:
        return self.lost.done()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


@dataclass(frozen=True)
class AclUser:
    """A Redis ACL user made by :func:`acl_user`: its name and password."""

    name: str
    password: str

    def url(self, port: int, *, scheme: str = "redis", query: str = "") -> str:
        """``scheme://name:password@127.0.0.1:port/0`` (both percent-encoded) ``?query``."""
        auth = f"{quote(self.name, safe='')}:{quote(self.password, safe='')}"
        return f"{scheme}://{auth}@127.0.0.1:{port}/0" + (f"?{query}" if query else "")


async def acl_user(
    admin: aioredis.Redis, org: str, *, cluster: bool = False, same_as: AclUser | None = None
) -> AclUser:
    """A user on ``admin``'s Redis with exactly the rules docs/OPERATIONS.md gives for
    ``org`` (``services.store.access.acl_rules``); ``same_as``: that user's name and
    password (on another node). A new password holds characters a URL must escape
    (``@ : / %``)."""
    user = same_as or AclUser(f"casino-{org}", f"p@ss:w/rd%{secrets.token_hex(8)}")
    await admin.execute_command(
        "ACL", "SETUSER", user.name, "reset", "on", f">{user.password}",
        *acl_rules(org, cluster=cluster),
    )  # fmt: skip
    return user


async def acl_denials(admin: aioredis.Redis, user: AclUser) -> list[dict[str, Any]]:
    """What Redis refused ``user`` (its ACL LOG), except redis-py's own handshake: a new
    connection offers ``CLIENT SETINFO`` (and ``CLIENT MAINT_NOTIFICATIONS``), whose refusal
    redis-py ignores and the server never needs."""
    entries: list[dict[bytes, Any]] = await admin.execute_command("ACL", "LOG", "128")
    out = []
    for entry in entries:
        e = {k.decode(): v.decode() if isinstance(v, bytes) else v for k, v in entry.items()}
        if e["username"] != user.name:
            continue
        if e["reason"] == "command" and e["object"] == "client":
            continue
        out.append(e)
    return out


async def run_until_answered(actor: Actor[Any, Any], subs: Sequence[Submission[Any]]) -> None:
    """Run ``actor`` until every submission in ``subs`` has its reply (at most 10 s)."""
    task = asyncio.create_task(actor.run())
    try:
        await asyncio.wait_for(asyncio.gather(*(s.future for s in subs)), 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
