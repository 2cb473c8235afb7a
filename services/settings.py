"""Server settings: command-line flags over environment variables over defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MAX_WAIT_REPLICAS = 16
"""Most replicas ``wait_replicas`` may ask for."""
MAX_WAIT_TIMEOUT_MS = 60_000
"""Longest ``wait_timeout_ms``: past a minute a command is answered ``unavailable`` anyway."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    night: Path = Path("examples/night.toml")
    host: str = "127.0.0.1"
    port: int = 8080
    data_dir: Path = Path("var")
    redis_url: str | None = None
    """``REDIS_URL``: use that Redis (>= 6.2, Valkey, Cluster), given whole to redis-py:
    ``redis://user:password@host:port/0`` for an ACL user, ``rediss://`` for TLS with its
    ``ssl_*`` query options. Unset: the embedded redis-server (loopback, with a password
    kept in the data directory)."""
    appendfsync: str = "always"
    """``CASINO_APPENDFSYNC``: the embedded Redis's fsync policy (always, everysec, no)."""
    wait_replicas: int = 0
    """``CASINO_WAIT_REPLICAS``: replicas of the Redis primary that must confirm each append
    (Redis ``WAIT``) before its commands are acknowledged; fewer within
    ``wait_timeout_ms`` and the commands get ``unavailable`` (retry the same id). 0: answer
    as soon as the primary has written (and fsynced) it; a failover to a replica can then
    lose what the replica had not received (docs/OPERATIONS.md, "Redis Cluster")."""
    wait_timeout_ms: int = 1000
    """``CASINO_WAIT_TIMEOUT_MS``: how long one append waits for its replicas (1 to
    60,000 ms); keep it well below ``command_deadline_seconds``."""
    max_frame_bytes: int = 64 * 1024
    """Largest websocket message or HTTP command accepted; larger closes with 1009."""
    send_buffer_bytes: int = 1024 * 1024
    """Unsent bytes one websocket client may have before it is disconnected as too slow."""
    heartbeat_seconds: float = 15.0
    mailbox_size: int = 4096
    """Commands queued for one actor before new ones get ``busy``."""
    principal_in_flight: int = 16
    """Commands and subscribes one principal (a token's role and sub) may have awaiting
    their replies, across all its connections. While it has that many, its websockets are
    not read (TCP paces the sender) and its HTTP commands get ``busy``: a flooding client
    slows down only itself."""
    principal_rate: float = 500.0
    """Tokens a second one principal's messages are read at, sustained (bursts of
    ``principal_burst``); a message costs one token per 256 bytes, at least one (a bet is
    one): far above any tablet's need; past it the client waits (and an HTTP command gets
    ``busy``)."""
    principal_burst: int = 200
    principal_connections: int = 32
    """Connections one principal may hold open to one server process at once (websockets
    and the HTTP connections it has sent requests on); one more is refused (429 ``busy``),
    so what one token's connections hold (1 MiB unsent on each websocket, a view in the
    kernel's send buffer on each HTTP connection) stays bounded. A tablet needs one or
    two, a browser console about seven."""
    keepalive_seconds: float = 75.0
    """An HTTP connection idle this long after its last answer is closed (aiohttp's
    ``run_app`` default; its server's own is an hour)."""
    max_subscriptions: int = 64
    """Streams and views one websocket connection may follow at once."""
    command_deadline_seconds: float = 5.0
    """Longest a command waits for its reply: past it the reply is ``unavailable`` (the
    command may still be applied; its retry with the same id learns what happened)."""
    log_format: str = "json"
    """``CASINO_LOG_FORMAT``: ``json`` (production) or ``console`` (development)."""
    anchor_key: Path | None = None
    """``CASINO_ANCHOR_KEY``: the file of the Ed25519 private key (PEM) that signs the
    store's checkpoints; unset: ``<data-dir>/anchor.key``, created on the first ``serve``
    (``services.store.anchor``). Keep it where Redis's users cannot write."""

    node: str | None = None
    """``--node`` / ``CASINO_NODE``: this process's node id among the organization's server
    processes (letters, digits, ``. _ -``). Unset: the host name and a short hash of the
    data directory's real path, so a restart on the same data directory is the same node
    (and takes back its streams at once)."""
    lease_seconds: float = 3.0
    """``CASINO_LEASE_SECONDS``: how long a stream's lease (and a node's membership) lasts
    without renewal: the most a dead process's streams wait before another takes them."""
    lease_renew_seconds: float = 1.0
    """``CASINO_LEASE_RENEW_SECONDS``: how often a process renews its leases and
    membership and places the streams (well under ``lease_seconds``)."""
    inbox_max_len: int = 10_000
    """Entries a process's inbox stream keeps (``XADD MAXLEN ~``): commands forwarded to
    it and replies to those it forwarded; far more than one deadline's worth."""
    forward_hops: int = 2
    """How many times one command may be forwarded between processes (an owner that no
    longer owns it forwards once more); past it the reply is ``unavailable``."""
    reuse_port: bool = False
    """``--reuse-port``: listen with ``SO_REUSEPORT`` so several processes on one machine
    share the port (the kernel spreads the connections)."""

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        values: dict[str, object] = {
            "redis_url": env.get("REDIS_URL") or None,
            "appendfsync": env.get("CASINO_APPENDFSYNC", "always"),
            "log_format": env.get("CASINO_LOG_FORMAT", "json"),
        }
        for name, field in (
            ("CASINO_WAIT_REPLICAS", "wait_replicas"),
            ("CASINO_WAIT_TIMEOUT_MS", "wait_timeout_ms"),
        ):
            if env.get(name):
                try:
                    values[field] = int(env[name])
                except ValueError:
                    raise ValueError(f"{name} must be a whole number") from None
        if env.get("CASINO_ANCHOR_KEY"):
            values["anchor_key"] = Path(env["CASINO_ANCHOR_KEY"])
        if env.get("CASINO_NODE"):
            values["node"] = env["CASINO_NODE"]
        for name in ("lease_seconds", "lease_renew_seconds"):
            raw = env.get(f"CASINO_{name.upper()}")
            if raw:
                values[name] = float(raw)
        if "CASINO_DATA_DIR" in env:
            values["data_dir"] = Path(env["CASINO_DATA_DIR"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)  # type: ignore[arg-type]
        if settings.appendfsync not in ("always", "everysec", "no"):
            raise ValueError("CASINO_APPENDFSYNC must be always, everysec or no")
        if not 0 <= settings.wait_replicas <= MAX_WAIT_REPLICAS:
            raise ValueError(f"CASINO_WAIT_REPLICAS must be 0 to {MAX_WAIT_REPLICAS}")
        if not 1 <= settings.wait_timeout_ms <= MAX_WAIT_TIMEOUT_MS:
            raise ValueError(f"CASINO_WAIT_TIMEOUT_MS must be 1 to {MAX_WAIT_TIMEOUT_MS}")
        if not 0 < settings.lease_renew_seconds < settings.lease_seconds:
            raise ValueError("the lease renewal must be more often than the lease lasts")
        return settings
