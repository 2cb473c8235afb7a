"""A process's node id, its data-directory lock, and the lease settings' check."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cluster.identity import NodeLock, check_node_id, default_node_id, new_incarnation
from services.settings import Settings
from services.store.embedded import DataDirBusy


def test_the_default_node_id_follows_the_data_directory(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (tmp_path / "link").symlink_to(one)
    assert default_node_id(one) == default_node_id(tmp_path / "link")  # its real path
    assert default_node_id(one) != default_node_id(two)
    assert check_node_id(default_node_id(one)) == default_node_id(one)
    assert new_incarnation() != new_incarnation()


@pytest.mark.parametrize("bad", ["", "a|b", "a b", "x" * 65, "né"])
def test_a_node_id_that_cannot_be_part_of_a_lease_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="node id"):
        check_node_id(bad)


def test_one_process_per_data_directory(tmp_path: Path) -> None:
    first = NodeLock(tmp_path)
    first.acquire()
    try:
        with pytest.raises(DataDirBusy, match="another casino-night serve uses"):
            NodeLock(tmp_path).acquire()
    finally:
        first.release()
    again = NodeLock(tmp_path)
    again.acquire()  # free once released (the kernel frees it when a process dies too)
    again.release()


def test_the_lease_settings_come_from_the_environment_and_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CASINO_LEASE_SECONDS", "1.5")
    monkeypatch.setenv("CASINO_LEASE_RENEW_SECONDS", "0.5")
    monkeypatch.setenv("CASINO_NODE", "hall-a")
    s = Settings.from_env()
    assert (s.lease_seconds, s.lease_renew_seconds, s.node) == (1.5, 0.5, "hall-a")
    assert Settings.from_env(node="hall-b").node == "hall-b"
    monkeypatch.setenv("CASINO_LEASE_RENEW_SECONDS", "1.5")
    with pytest.raises(ValueError, match="renewal"):
        Settings.from_env()
