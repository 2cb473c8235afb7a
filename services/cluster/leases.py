"""Membership and leases in Redis, as Lua scripts registered once and run by their SHA.

A lease's value is ``<node>|<incarnation>|<token>``: the token comes from ``HINCRBY
fences <name> 1`` at every acquisition, so no two holders of a stream, ever, share a
value, and the append script (``services/store/append.lua``) refuses an append whose
lease value is not the one in Redis. Expiries and liveness use Redis's clock (``TIME``
inside the scripts, ``PX`` on the keys), never a process's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.store import keys
from services.store.redis_store import RedisClient

PROJECTIONS = "projections"
"""The lease of the projections' checkpoint (one holder per organization saves it)."""

_ACQUIRE = """
-- KEYS: 1 lease, 2 fences; ARGV: 1 name, 2 node, 3 incarnation, 4 lease ms
local cur = redis.call('GET', KEYS[1])
if cur then
  local node, inc = string.match(cur, '^([^|]*)|([^|]*)|')
  if node ~= ARGV[2] then
    return {'taken', cur}
  end
  if inc == ARGV[3] then
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    return {'ok', cur}
  end
end
local token = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
local value = ARGV[2] .. '|' .. ARGV[3] .. '|' .. token
redis.call('SET', KEYS[1], value, 'PX', ARGV[4])
return {'ok', value}
"""

_RENEW = """
-- KEYS: the leases held; ARGV: 1 lease ms, then the value held of each key
local lost = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

_RELEASE = """
-- KEYS: leases; ARGV: the value held of each: deleted only while still that value
local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    redis.call('DEL', key)
    n = n + 1
  end
end
return n
"""

_HEARTBEAT = """
-- KEYS: 1 members; ARGV: 1 node, 2 ms it stays live ('' : leave), 3 ms after which a
-- dead entry is forgotten. Returns the live nodes, by Redis's clock.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], now + tonumber(ARGV[2]))
end
local all = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #all, 2 do
  local expiry = tonumber(all[i + 1])
  if expiry and expiry > now then
    live[#live + 1] = all[i]
  elseif (not expiry) or expiry < now - tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return live
"""

_GUARDED_SET = """
-- KEYS: 1 lease, 2 key; ARGV: 1 the lease value held, 2 the value: SET only while held
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""

FORGET_DEAD_MS = 60_000
"""A member entry this long past its expiry is removed from ``members``."""


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease, parsed from its value."""

    node: str
    incarnation: str
    token: int
    value: str


def parse_holder(value: str | bytes | None) -> Holder | None:
    """The holder a lease value names (None for no lease or a value of another form)."""
    if value is None:
        return None
    text = value.decode() if isinstance(value, bytes) else value
    parts = text.split("|")
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return Holder(parts[0], parts[1], int(parts[2]), text)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Leases:
    """The organization's membership and leases, for one node and incarnation."""

    def __init__(self, redis: RedisClient, org: str, node: str, incarnation: str) -> None:
        self.redis = redis
        self.org = org
        self.node = node
        self.incarnation = incarnation
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._guarded_set = redis.register_script(_GUARDED_SET)

    def key(self, name: str) -> str:
        return keys.lease(self.org, name)

    async def heartbeat(self, live_ms: int) -> list[str]:
        """Say this node is live for ``live_ms`` more; the live nodes, sorted."""
        got: Any = await self._heartbeat(
            keys=[keys.members(self.org)], args=[self.node, live_ms, FORGET_DEAD_MS]
        )
        return sorted(_s(n) for n in got)

    async def leave(self) -> None:
        """Remove this node from the members at once (a clean shutdown)."""
        await self._heartbeat(keys=[keys.members(self.org)], args=[self.node, "", FORGET_DEAD_MS])

    async def acquire(self, name: str, lease_ms: int) -> tuple[bool, str]:
        """Take the lease of ``name`` if it is free, or held by this node's earlier
        incarnation (then with a new token), or renew it if this incarnation holds it.
        Returns (taken, the lease's value now)."""
        got: Any = await self._acquire(
            keys=[self.key(name), keys.fences(self.org)],
            args=[name, self.node, self.incarnation, lease_ms],
        )
        return _s(got[0]) == "ok", _s(got[1])

    async def renew(self, held: Sequence[tuple[str, str]], lease_ms: int) -> list[str]:
        """Extend every lease in ``held`` ((name, value) pairs) in one call; the names of
        those no longer held (expired, or taken by another node)."""
        if not held:
            return []
        got: Any = await self._renew(
            keys=[self.key(name) for name, _v in held],
            args=[lease_ms, *(value for _n, value in held)],
        )
        return [held[int(i) - 1][0] for i in got]

    async def release(self, held: Sequence[tuple[str, str]]) -> int:
        """Delete each lease in ``held`` that still has the value held; how many."""
        if not held:
            return 0
        n: Any = await self._release(
            keys=[self.key(name) for name, _v in held], args=[value for _n, value in held]
        )
        return int(n)

    async def holders(self, names: Sequence[str]) -> dict[str, Holder | None]:
        """Who holds each lease now (one ``MGET``)."""
        if not names:
            return {}
        values: Any = await self.redis.mget([self.key(name) for name in names])
        return {name: parse_holder(v) for name, v in zip(names, values, strict=True)}

    async def holder(self, name: str) -> Holder | None:
        return parse_holder(await self.redis.get(self.key(name)))

    async def guarded_set(self, lease_name: str, lease_value: str, key: str, value: bytes) -> bool:
        """``SET key value`` only while the lease of ``lease_name`` has ``lease_value``
        (a paused former holder cannot overwrite what the new one wrote)."""
        got: Any = await self._guarded_set(
            keys=[self.key(lease_name), key], args=[lease_value, value]
        )
        return int(got) == 1
