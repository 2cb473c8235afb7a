"""What a production Redis must let the server do: the ACL of its user (docs/OPERATIONS.md,
"Redis access").

The user may touch only the organization's keys and pub/sub channels (both named under
``cn:{<org>}:``) and run only the commands below. This is the one list: the ACL line in
docs/OPERATIONS.md and deploy/users.acl are checked against it, and the tests run the
server, ``replay``, ``verify`` and ``exclusions`` as a user given exactly these rules.
A command added to the code goes here too, or that user's calls are refused (``NOPERM``).
"""

from __future__ import annotations

from services.store import keys

SERVER_COMMANDS: tuple[str, ...] = (
    # Connection: PING for /readyz and redis-py's health checks, INFO (its `cluster`
    # section) to tell a cluster node at start. AUTH and HELLO need no rule.
    "ping",
    "info",
    # The append script and the purchaser-vault scripts: run by their SHA, loaded again
    # when Redis answers NOSCRIPT. The commands they call are checked like any other.
    "evalsha",
    "script|load",
    # WAIT after an append, with CASINO_WAIT_REPLICAS > 0: replicas must confirm it first.
    "wait",
    # Hashes: meta, idempotency records, balances, purchaser vault.
    "hget",
    "hmget",
    "hgetall",
    "hset",
    "hexists",
    "hincrby",
    "hdel",
    # Streams: aggregate streams and the org log (never trimmed).
    "xadd",
    "xrange",
    "xrevrange",
    "xread",
    # Sets: the stream index, self-exclusion lists (loaded under a temporary key, then
    # swapped in).
    "sadd",
    "smembers",
    "sismember",
    "sunionstore",
    # Sorted sets: each table's round index, written by the append script, read by recall.
    "zadd",
    "zrangebyscore",
    "zrevrangebyscore",
    "zscore",
    # Strings and key moves: projection checkpoint, the Queen of Hearts board an older raffle
    # keeps (read only), the self-exclusion swap.
    "get",
    "set",
    "del",
    "expire",
    "rename",
    # Pub/sub between the server processes of an organization (token revocation), on
    # channels named under cn:{<org>}:.
    "publish",
    "subscribe",
    "unsubscribe",
    # Several server processes of one organization (services.cluster): the members'
    # expiries by Redis's clock (TIME in a script), the leases' expiries (PEXPIRE), every
    # stream's lease read at once (MGET); inboxes are streams (XADD, XREAD).
    "time",
    "pexpire",
    "mget",
)
"""Every command the server, ``replay``, ``verify`` and ``exclusions`` send to Redis, as
Redis ACL names (``container|subcommand`` for a single subcommand)."""

CLUSTER_COMMANDS: tuple[str, ...] = ("cluster|slots", "command", "asking")
"""What the cluster client sends besides: the slot map (CLUSTER SLOTS), the command table
and key positions (COMMAND, COMMAND GETKEYS), and ASKING while a slot migrates."""


def acl_rules(org: str, *, cluster: bool = False) -> list[str]:
    """The ACL rules (after ``user <name> on <password>``) of a user that may serve the
    organization ``org`` and nothing else: its keys, its channels, exactly the commands
    above (with ``cluster``, also those of the cluster client)."""
    pattern = keys.org_pattern(org)
    commands = SERVER_COMMANDS + (CLUSTER_COMMANDS if cluster else ())
    return [
        "resetkeys",
        f"~{pattern}",
        "resetchannels",
        f"&{pattern}",
        "-@all",
        *(f"+{c}" for c in commands),
    ]
