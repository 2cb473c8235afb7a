"""Appends acknowledged only once replicas hold them (``wait_replicas``; docs/OPERATIONS.md,
"Redis Cluster").

Redis replicates asynchronously: its reply to a write says the primary has it (and, with
``appendfsync always``, its disk), not that any replica does. ``WAIT n timeout`` blocks until
``n`` replicas have acknowledged every write the primary had made when the *same
connection's* last write ran, or until the timeout; it answers how many did. So the append
script and its ``WAIT`` must travel on one connection: on a single Redis, one ``WAIT`` at
the end of each pipeline covers all its calls; on a cluster, the script and ``WAIT`` go
together on one connection of the master of the organization's slot
(:func:`call_on_master`).

When fewer than ``n`` replicas confirm (or ``WAIT`` fails), the append may well have been
written on the primary: the call fails with :class:`NotReplicated`, a connection-level
fault, so the actor answers ``unavailable`` and reloads; the client's retry with the same id
finds the stored reply, which the store then confirms again (:func:`confirm_on_master`)
before anyone is answered from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster

MAX_REDIRECTS = 5
"""``MOVED`` / ``ASK`` answers one replicated call follows (a slot moved, or a failover the
client had not learnt) before it gives up as ``unavailable``."""

STORE_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
    # A Redis Cluster in the middle of a failover: the slot's master is down or being
    # replaced (CLUSTERDOWN, MASTERDOWN, TRYAGAIN, a redirection loop), or no node the client
    # knows answers the slot map.
    redis.exceptions.ClusterError,
    redis.exceptions.TryAgainError,
    redis.exceptions.AskError,
    redis.exceptions.RedisClusterException,
    # A write sent to a primary that was just demoted to a replica.
    redis.exceptions.ReadOnlyError,
)
"""Faults of the event store after which the fate of a call is unknown: the command is
answered ``unavailable`` (retry with the same id), never with a guess."""


class NotReplicated(redis.exceptions.ConnectionError):
    """Redis wrote the call but fewer than the required replicas confirmed it in time: the
    write may be lost in a failover, so it is not acknowledged. A retry with the same id
    learns whether it stayed."""

    def __init__(self, required: int, confirmed: int | None, detail: str = "") -> None:
        self.required = required
        self.confirmed = confirmed
        got = "no answer from WAIT" if confirmed is None else f"{confirmed} confirmed"
        super().__init__(
            f"not confirmed on {required} replica{'s' if required != 1 else ''} "
            f"({got}{': ' + detail if detail else ''}); retry the same id"
        )


def wait_command(replicas: int, timeout_ms: int) -> tuple[Any, ...]:
    """The ``WAIT`` that follows an append: ``replicas`` confirmations, ``timeout_ms`` at most."""
    return ("WAIT", replicas, timeout_ms)


def check_wait(reply: Any, required: int) -> None:
    """Raise :class:`NotReplicated` unless ``reply`` (WAIT's) counts ``required`` replicas."""
    if isinstance(reply, BaseException):
        raise NotReplicated(required, None, str(reply) or type(reply).__name__)
    if not isinstance(reply, int) or reply < required:
        raise NotReplicated(required, reply if isinstance(reply, int) else None)


def unconfirmed(results: list[Any], wait_reply: Any, required: int) -> list[Any]:
    """The results of a pipeline's calls given its closing WAIT's reply: unchanged when
    confirmed; else each call that got an answer fails with :class:`NotReplicated`, and a
    call that failed keeps its error (a ``NOSCRIPT`` ran nothing and is sent again)."""
    try:
        check_wait(wait_reply, required)
    except NotReplicated as e:
        return [r if isinstance(r, BaseException) else e for r in results]
    return results


async def call_single(
    client: aioredis.Redis,
    sha: str,
    source: str,
    keys: Sequence[str],
    args: Sequence[Any],
    replicas: int,
    timeout_ms: int,
) -> Any:
    """EVALSHA then WAIT in one pipeline (one connection) of a single Redis."""
    for _ in range(2):
        pipe = client.pipeline(transaction=False)
        pipe.evalsha(sha, len(keys), *keys, *args)
        pipe.execute_command(*wait_command(replicas, timeout_ms))
        result, waited = await pipe.execute(raise_on_error=False)
        if isinstance(result, redis.exceptions.NoScriptError):
            # Redis restarted and lost its script cache: NOSCRIPT ran nothing.
            await client.script_load(source)
            continue
        if isinstance(result, BaseException):
            raise result
        check_wait(waited, replicas)
        return result
    raise redis.exceptions.NoScriptError("the append script could not be loaded")


async def call_on_master(
    cluster: RedisCluster,
    key: str,
    commands: Sequence[Sequence[Any]],
    replicas: int,
    timeout_ms: int,
    source: str | None = None,
) -> list[Any]:
    """Run ``commands`` (all on ``key``'s slot) and then ``WAIT replicas timeout_ms`` on one
    connection of the master of that slot; return the commands' replies once WAIT confirmed
    them, else raise :class:`NotReplicated` (or the first command's error).

    Follows ``MOVED`` (the slot map is patched from the answer) and ``ASK``; a lost node or
    a cluster that is down makes the client learn the slot map again before its next call,
    and the fault is raised (the caller answers ``unavailable``). With ``source``, a
    ``NOSCRIPT`` answer loads the script on that master and sends the commands again (a
    replica just promoted may not have it)."""
    asking: ClusterNode | None = None
    loaded = False
    for _ in range(MAX_REDIRECTS):
        await cluster.initialize()
        node = asking or cluster.get_node_from_key(key)
        if node is None:
            raise redis.exceptions.SlotNotCoveredError(f"no master serves the slot of {key}")
        stack = [PipelineCommand(i, *c) for i, c in enumerate(commands)]
        if asking is not None:
            stack.insert(0, PipelineCommand(-1, "ASKING"))
        stack.append(PipelineCommand(len(commands), *wait_command(replicas, timeout_ms)))
        try:
            await node.execute_pipeline(stack)
        except redis.exceptions.MaxConnectionsError:
            raise  # this process's own limit, not the node's fault
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            await _forget(cluster, node)
            raise
        replies = [c.result for c in stack[1 if asking is not None else 0 : -1]]
        waited = stack[-1].result
        asking = None
        fault = next((r for r in replies if isinstance(r, BaseException)), None)
        if isinstance(fault, redis.exceptions.MovedError):
            # Nothing ran: the slot is served elsewhere now (a failover, a resharding).
            await cluster.nodes_manager.move_slot(fault)
            continue
        if isinstance(fault, redis.exceptions.AskError):
            asking = cluster.get_node(host=fault.host, port=fault.port)
            if asking is None:
                await cluster.aclose()
                raise fault
            continue
        if isinstance(fault, redis.exceptions.NoScriptError) and source and not loaded:
            await node.execute_command("SCRIPT", "LOAD", source)
            loaded = True
            continue
        if fault is not None:
            if isinstance(
                fault,
                redis.exceptions.ConnectionError
                | redis.exceptions.TimeoutError
                | redis.exceptions.ClusterDownError,
            ):
                await _forget(cluster, node)
            raise fault
        check_wait(waited, replicas)
        return replies
    raise redis.exceptions.ClusterError(f"the slot of {key} kept moving")


async def _forget(cluster: RedisCluster, node: ClusterNode) -> None:
    """After a node failed or the cluster went down: drop that node's idle connections, try
    it last, and learn the slot map again before the next call (what the cluster client does
    itself for the calls it routes)."""
    node.update_active_connections_for_reconnect()
    await node.disconnect_free_connections()
    cluster.nodes_manager.move_node_to_end_of_cached_nodes(node.name)
    await cluster.aclose()


async def confirm_on_master(
    client: aioredis.Redis | RedisCluster,
    barrier_key: str,
    replicas: int,
    timeout_ms: int,
) -> None:
    """Make sure ``replicas`` replicas hold everything the master holds now: one small write
    (``HINCRBY barrier_key n 1``) and WAIT on its connection. WAIT counts replicas that reached
    the master's replication offset as of the connection's last write, so this confirms
    every earlier write of every connection, such as an append whose WAIT fell short and
    whose stored reply is about to answer a retry. Raises :class:`NotReplicated`."""
    barrier = ("HINCRBY", barrier_key, "n", 1)
    if isinstance(client, RedisCluster):
        await call_on_master(client, barrier_key, [barrier], replicas, timeout_ms)
        return
    pipe = client.pipeline(transaction=False)
    pipe.execute_command(*barrier)
    pipe.execute_command(*wait_command(replicas, timeout_ms))
    reply, waited = await pipe.execute(raise_on_error=False)
    if isinstance(reply, BaseException):
        raise reply
    check_wait(waited, replicas)


async def replicas_online(client: aioredis.Redis | RedisCluster, key: str) -> int:
    """How many replicas the master serving ``key`` has online now (``INFO replication``'s
    ``connected_slaves`` there), for the check at start that ``wait_replicas`` can be met."""
    if isinstance(client, RedisCluster):
        await client.initialize()
        node = client.get_node_from_key(key)
        if node is None:
            raise redis.exceptions.SlotNotCoveredError(f"no master serves the slot of {key}")
        raw: Any = node
        info: Any = await raw.execute_command("INFO", "replication")
    else:
        info = await client.info("replication")
    return int(info.get("connected_slaves", 0))
