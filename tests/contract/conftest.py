"""Fixtures of the contract tests: one real Redis Cluster (three masters, a replica each)
shared by the cluster test modules of this package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.cluster_nodes import Cluster, start_cluster, stop_cluster


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Six redis-server processes on loopback: three masters with one replica each, a
    password on each, AOF with ``appendfsync always``, ``cluster-node-timeout`` 1 s. A test
    that kills or pauses a node brings the cluster back to health before it ends."""
    c = start_cluster(tmp_path_factory.mktemp, replicas=1)
    try:
        yield c
    finally:
        stop_cluster(c)
