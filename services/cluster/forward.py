"""Commands forwarded to the process that owns their stream, and their replies.

Each process reads one stream of its own, ``inbox:<node>`` (``XREAD BLOCK``, from the
entries that arrive after it started): a request carries a request id, the sender's node,
the hop count, the principal (what its token said) and the raw protocol message; the
owner runs it through its normal command path (the same idempotency key and fingerprint)
and adds the reply, with the request id, to the sender's inbox. The sender resolves the
client's future once: with that reply, or by the command deadline (``unavailable``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import itertools
import json
from collections.abc import Callable
from typing import Any

import msgpack
import redis.exceptions
import structlog

from services.actor import Reply, Submission, error_reply
from services.derived_keys import derive_key
from services.gateway.auth import Principal
from services.store import keys
from services.store.redis_store import RedisClient
from services.store.replication import STORE_UNAVAILABLE
from services.tasks import cancel_and_wait, raise_if_cancelled

log = structlog.get_logger(__name__)

REQUEST = b"q"
REPLY = b"r"
BLOCK_MS = 1000
MAC_KEY_INFO = b"casino-night forwarded command"
"""HKDF info of the key that authenticates inbox entries (``services.derived_keys``)."""


def inbox_mac_key(secret: bytes) -> bytes:
    """The key of the inbox entries' MACs, from the server secret every process shares:
    Redis never holds it, so whoever can write to Redis cannot have a process run a
    command as any principal it names (it would be applied, hash-chained and signed like
    any other), nor answer a client in another process's name."""
    return derive_key(secret, MAC_KEY_INFO)


"""How long one inbox read waits for an entry."""

Message = dict[str, Any] | str
"""A protocol message: parsed, or the raw text of a websocket frame that the gateway's typed
path read without parsing it into a dict (parsed only if it must travel)."""


def message_dict(msg: Message) -> dict[str, Any]:
    """The message as a dict (a raw frame parsed; the typed path has checked it already)."""
    if isinstance(msg, str):
        parsed: dict[str, Any] = json.loads(msg)
        return parsed
    return msg


LocalSubmit = Callable[[Principal, dict[str, Any], int], "asyncio.Future[Reply]"]
"""The normal command path (``services.gateway.commands.submit_command``) with a hop count."""


@dataclasses.dataclass(slots=True, kw_only=True)
class Routed(Submission[Any]):
    """A client's command as queued for a local actor, with what it takes to send it to
    another process if the stream's ownership moves before it is applied."""

    who: Principal | None = None
    msg: Message | None = None
    hops: int = 0


def principal_data(who: Principal) -> dict[str, Any]:
    return {
        "role": who.role,
        "sub": who.sub,
        "exp": who.exp,
        "tables": list(who.tables),
        "player": who.player,
        "jti": who.jti,
    }


def principal_of(data: dict[str, Any]) -> Principal:
    return Principal(
        role=data["role"],
        sub=data["sub"],
        exp=int(data["exp"]),
        tables=tuple(data["tables"]),
        player=data["player"],
        jti=data["jti"],
    )


class Inbox:
    """This process's inbox: forwards requests, hands received ones to the command path,
    and resolves the requests it sent when their replies come."""

    def __init__(
        self,
        redis: RedisClient,
        org: str,
        node: str,
        *,
        max_len: int,
        mac_key: bytes,
        on_forwarded: Callable[[], None] | None = None,
    ) -> None:
        self.redis = redis
        self.org = org
        self.node = node
        self.max_len = max_len
        self.key = keys.inbox(org, node)
        self.mac_key = mac_key
        self.pending: dict[str, asyncio.Future[Reply]] = {}
        """Requests sent and not answered yet, by request id."""
        self.targets: dict[str, str] = {}
        """The node each pending request was sent to."""
        self.submit: LocalSubmit | None = None
        """The normal command path (wired by the gateway); without it a request is answered
        ``unavailable``."""
        self.on_forwarded = on_forwarded
        self._ids = itertools.count(1)
        self._last = "$"
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self) -> None:
        """Start after the inbox's last entry: what was sent to an earlier life of this
        node was answered by the deadline there."""
        last: Any = await self.redis.xrevrange(self.key, count=1)
        self._last = last[0][0].decode() if last else "0-0"

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def forward(self, node: str, who: Principal, msg: Message, hops: int) -> asyncio.Future[Reply]:
        """Send a command to ``node``'s inbox; the future is its one reply (or the
        deadline's, set by whoever watches it)."""
        request = f"{self.node}/{next(self._ids)}"
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.pending[request] = future
        self.targets[request] = node

        def forget(_f: asyncio.Future[Reply]) -> None:
            self.pending.pop(request, None)
            self.targets.pop(request, None)

        future.add_done_callback(forget)
        try:
            body = msgpack.packb(
                {
                    "r": request,
                    "from": self.node,
                    "hops": hops,
                    "who": principal_data(who),
                    "msg": message_dict(msg),
                },
                use_bin_type=True,
            )
        except (TypeError, ValueError, OverflowError, UnicodeError):
            future.set_result(error_reply("bad_request", "the command cannot be forwarded"))
            return future
        self._spawn(self._send(node, REQUEST, body, future))
        if self.on_forwarded is not None:
            self.on_forwarded()
        return future

    async def _send(
        self, node: str, kind: bytes, body: bytes, future: asyncio.Future[Reply] | None
    ) -> None:
        inbox = keys.inbox(self.org, node)
        try:
            await self.redis.xadd(
                inbox,
                {b"k": kind, b"m": body, b"a": self._mac(inbox, kind, body)},
                maxlen=self.max_len,
                approximate=True,
            )
        except (redis.exceptions.RedisError, OSError) as e:
            log.warning("forward_failed", node=node, error=type(e).__name__)
            if future is not None and not future.done():
                future.set_result(
                    error_reply(
                        "unavailable", "the owner of this stream is unreachable; retry the same id"
                    )
                )

    async def run(self) -> None:
        """Read the inbox forever (requests to run here, replies to requests sent)."""
        while True:
            try:
                got: Any = await self.redis.xread({self.key: self._last}, count=500, block=BLOCK_MS)
            except STORE_UNAVAILABLE as e:
                raise_if_cancelled()
                log.warning("inbox_read_failed", error=str(e))
                await asyncio.sleep(0.2)
                continue
            except Exception:
                # The Redis client's own state can break mid-failover (a connection it
                # dropped under a call): the inbox must outlive that, or replies are lost.
                raise_if_cancelled()
                log.exception("inbox_read_failed")
                await asyncio.sleep(0.2)
                continue
            for _key, entries in got or []:
                for entry_id, fields in entries:
                    self._last = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                    self._handle(fields)

    def _mac(self, inbox: str, kind: bytes, body: bytes) -> bytes:
        """HMAC-SHA256 of an entry, bound to the inbox it is written to."""
        signed = inbox.encode() + b"\0" + kind + b"\0" + body
        return hmac.new(self.mac_key, signed, hashlib.sha256).digest()

    def _handle(self, fields: dict[bytes, bytes]) -> None:
        try:
            kind = fields[b"k"]
            raw = fields[b"m"]
            mac = fields.get(b"a", b"")
        except Exception:  # anything may have been written there
            log.error("inbox_entry_unreadable")
            return
        if not hmac.compare_digest(mac, self._mac(self.key, kind, raw)):
            # Not written by a process of this organization: never run, never answered.
            log.error("inbox_entry_forged")
            return
        try:
            body = msgpack.unpackb(raw, raw=False)
        except Exception:
            log.error("inbox_entry_unreadable")
            return
        if kind == REPLY:
            future = self.pending.pop(str(body.get("r")), None)
            if future is not None and not future.done():
                future.set_result(body["reply"])
            return
        if kind == REQUEST:
            self._run_request(body)

    def _run_request(self, body: dict[str, Any]) -> None:
        sender = str(body["from"])
        request = body["r"]
        if self.submit is None:
            reply = error_reply("unavailable", "this server process is starting; retry")
            self._reply(sender, request, reply)
            return
        try:
            future = self.submit(principal_of(body["who"]), dict(body["msg"]), int(body["hops"]))
        except Exception:
            log.exception("forwarded_command_failed")
            self._reply(sender, request, error_reply("internal", "internal error; retry"))
            return
        future.add_done_callback(lambda f: self._reply(sender, request, f.result()))

    def _reply(self, sender: str, request: Any, reply: Reply) -> None:
        body = msgpack.packb({"r": request, "reply": reply}, use_bin_type=True)
        self._spawn(self._send(sender, REPLY, body, None))

    def abandon(self, live: set[str], reply: Reply) -> int:
        """Answer ``reply`` to every pending request sent to a node no longer live (it
        died with the request: the request's fate is unknown, so the client retries the
        same id); how many."""
        gone = [r for r, node in self.targets.items() if node not in live]
        for request in gone:
            future = self.pending.get(request)
            if future is not None and not future.done():
                future.set_result(reply)
        return len(gone)

    def fail_pending(self) -> None:
        for future in list(self.pending.values()):
            if not future.done():
                future.set_result(
                    error_reply("unavailable", "the server is shutting down; retry the same id")
                )
        self.pending.clear()

    async def stop(self) -> None:
        self.fail_pending()
        await cancel_and_wait(list(self._tasks))
