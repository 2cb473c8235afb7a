"""Revoked tokens, shared by every server process of an organization.

A revocation is a field of the hash ``keys.revoked(org)`` (token id -> its ``exp``, Unix
seconds; ``0`` when the expiry is not known) and a message on the channel
``keys.revocations_channel(org)``. Each process keeps the set in memory, so the check at
connect (:meth:`Revocations.is_revoked`) costs no Redis call. :meth:`Revocations.run`
listens on the channel and, since pub/sub drops whatever is published while a subscriber
is disconnected, reads the whole hash again after every (re)subscription and every
:data:`RELOAD_SECONDS`.

The lead's code calls:

- ``await revocations.revoke(jti, exp)`` to revoke (the ``revoke_token`` op, the CLI);
- ``revocations.is_revoked(jti)`` before accepting a token;
- ``revocations.on_revoked(callback)`` to hear of each token id newly revoked (to close
  the sockets opened with it), whichever way this process learned of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import structlog

from services.gateway.auth import valid_jti
from services.store import keys
from services.store.redis_store import RedisClient
from services.tasks import raise_if_cancelled

log = structlog.get_logger(__name__)

RELOAD_SECONDS = 30.0
"""How often a running process reads the whole revocation hash again, in case a message
on the channel was lost (pub/sub does not queue for a subscriber that is away)."""
RETRY_SECONDS = 1.0
"""Pause before subscribing again after the subscription failed (Redis away)."""
PRUNE_GRACE_SECONDS = 3600
"""How long after a revoked token's expiry its entry is kept before it is pruned: the
servers' clocks may differ, and an expired token is refused anyway."""
NO_EXPIRY = 0
"""The stored expiry of a token revoked by its id alone: kept for good."""

RevokedCallback = Callable[[str], None]


class Revocations:
    """The revoked token ids of one organization, in Redis and in this process's memory."""

    def __init__(
        self,
        redis: RedisClient,
        org: str,
        *,
        reload_seconds: float = RELOAD_SECONDS,
        retry_seconds: float = RETRY_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._key = keys.revoked(org)
        self._channel = keys.revocations_channel(org)
        self._reload_seconds = reload_seconds
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._revoked: dict[str, int] = {}
        self._callbacks: list[RevokedCallback] = []
        self._listening = False
        self.reloads = 0
        """How many times the hash was read (for tests and diagnostics)."""

    def __repr__(self) -> str:
        return f"Revocations(key={self._key!r}, revoked={len(self._revoked)})"

    def revoked_ids(self) -> frozenset[str]:
        """Every revoked token id this process knows of."""
        return frozenset(self._revoked)

    def is_revoked(self, jti: str) -> bool:
        """Whether the token with id ``jti`` is revoked, as far as this process knows (no
        Redis call)."""
        return jti in self._revoked

    def on_revoked(self, callback: RevokedCallback) -> None:
        """Call ``callback(jti)`` once for each token id this process learns is revoked
        from now on: by :meth:`revoke` here, by a message on the channel, or by a re-read of
        the hash. It runs in the event loop and must not block; an exception it raises is
        logged and does not stop the others."""
        self._callbacks.append(callback)

    async def revoke(self, jti: str, exp: int | None = None) -> bool:
        """Revoke the token with id ``jti`` for every process of the organization: record
        it in Redis, publish it, and note it here (callbacks included). ``exp`` is the
        token's expiry when known (the entry may be pruned after it); None keeps the entry
        for good. True when it was not revoked before. ValueError for a ``jti`` that is not
        a token id or an ``exp`` that is not a non-negative integer; Redis errors
        propagate (nothing is noted here then)."""
        if not valid_jti(jti):
            raise ValueError(f"{jti!r} is not a token id (1 to 64 characters A-Z a-z 0-9 _ -)")
        if exp is None:
            exp = NO_EXPIRY
        if isinstance(exp, bool) or not isinstance(exp, int) or exp < 0:
            raise ValueError(f"a token's expiry is a non-negative integer, not {exp!r}")
        added: Any = await self._redis.hset(self._key, jti, str(exp))
        await self._redis.publish(self._channel, json.dumps({"jti": jti, "exp": exp}))
        known = jti in self._revoked
        self._learn(jti, exp)
        return bool(added) and not known

    async def load(self) -> int:
        """Read the whole revocation hash into memory (calling the callbacks for the ids
        new to this process) and prune the entries past their expiry by more than
        :data:`PRUNE_GRACE_SECONDS`; how many token ids are revoked now."""
        raw: Any = await self._redis.hgetall(self._key)
        self.reloads += 1
        now = self._clock()
        stale: list[Any] = []
        for field, value in raw.items():
            jti = field.decode(errors="replace") if isinstance(field, bytes) else str(field)
            try:
                exp = int(value)
            except ValueError:
                exp = NO_EXPIRY  # unreadable: keep it revoked rather than guess
            if exp != NO_EXPIRY and exp + PRUNE_GRACE_SECONDS <= now:
                stale.append(field)
                continue
            self._learn(jti, exp)
        for jti, exp in list(self._revoked.items()):
            if exp != NO_EXPIRY and exp + PRUNE_GRACE_SECONDS <= now:
                del self._revoked[jti]  # expired long ago: refused as expired anyway
        if stale:
            await self._redis.hdel(self._key, *stale)
        return len(self._revoked)

    def _learn(self, jti: str, exp: int) -> None:
        if not valid_jti(jti):
            return
        old = self._revoked.get(jti)
        if old is not None:
            self._revoked[jti] = NO_EXPIRY if NO_EXPIRY in (old, exp) else max(old, exp)
            return
        self._revoked[jti] = exp
        for callback in tuple(self._callbacks):
            try:
                callback(jti)
            except Exception:
                log.exception("revocation_callback_failed", jti=jti)

    def _on_message(self, data: Any) -> None:
        try:
            body = json.loads(data)
            jti, exp = body["jti"], body["exp"]
        except (ValueError, TypeError, KeyError):
            log.warning("revocation_message_ignored")
            return
        if isinstance(jti, str) and isinstance(exp, int) and not isinstance(exp, bool):
            self._learn(jti, exp)
        else:
            log.warning("revocation_message_ignored")

    async def run(self) -> None:
        """Follow revocations until cancelled: subscribe to the channel, read the hash
        after each (re)subscription and every ``reload_seconds``, and subscribe again
        ``retry_seconds`` after the subscription fails (Redis restarting); never returns
        or raises otherwise."""
        while True:
            pubsub: Any = self._redis.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                await self._listen(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                raise_if_cancelled()
                if self._listening:
                    log.warning("revocations_unsubscribed", error=type(e).__name__)
                self._listening = False
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(self._retry_seconds)

    async def _listen(self, pubsub: Any) -> None:
        loop = asyncio.get_running_loop()
        next_reload = loop.time() + self._reload_seconds
        while True:
            raise_if_cancelled()
            timeout = max(0.0, next_reload - loop.time())
            message = await pubsub.get_message(ignore_subscribe_messages=False, timeout=timeout)
            if message is not None:
                kind = message.get("type")
                if kind == "message":
                    self._on_message(message.get("data"))
                elif kind == "subscribe":
                    # Subscribed, at first or after the client reconnected by itself:
                    # anything published while away is only in the hash.
                    await self.load()
                    next_reload = loop.time() + self._reload_seconds
                    if not self._listening:
                        log.info("revocations_subscribed", channel=self._channel)
                    self._listening = True
            if loop.time() >= next_reload:
                await self.load()
                next_reload = loop.time() + self._reload_seconds
