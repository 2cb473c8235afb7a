"""``CASINO_WAIT_REPLICAS`` and ``CASINO_WAIT_TIMEOUT_MS``: read from the environment,
bounded, and a bad value stops ``serve`` with a clear message before anything starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from services.settings import MAX_WAIT_REPLICAS, Settings
from tests.e2e.serve import EXE


def test_the_defaults_wait_for_no_replica() -> None:
    settings = Settings()
    assert settings.wait_replicas == 0 and settings.wait_timeout_ms == 1000


def test_the_environment_sets_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASINO_WAIT_REPLICAS", "1")
    monkeypatch.setenv("CASINO_WAIT_TIMEOUT_MS", "250")
    settings = Settings.from_env()
    assert settings.wait_replicas == 1 and settings.wait_timeout_ms == 250


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("CASINO_WAIT_REPLICAS", "one", "CASINO_WAIT_REPLICAS must be a whole number"),
        ("CASINO_WAIT_REPLICAS", "-1", f"CASINO_WAIT_REPLICAS must be 0 to {MAX_WAIT_REPLICAS}"),
        ("CASINO_WAIT_REPLICAS", "17", f"CASINO_WAIT_REPLICAS must be 0 to {MAX_WAIT_REPLICAS}"),
        ("CASINO_WAIT_TIMEOUT_MS", "0", "CASINO_WAIT_TIMEOUT_MS must be 1 to 60000"),
        ("CASINO_WAIT_TIMEOUT_MS", "1.5", "CASINO_WAIT_TIMEOUT_MS must be a whole number"),
    ],
)
def test_a_bad_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"^{message}$"):
        Settings.from_env()


def test_serve_refuses_a_bad_value_with_status_2(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(EXE), "serve", "--data-dir", str(tmp_path / "d")],
        env={"CASINO_WAIT_REPLICAS": "many", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert "casino-night serve: CASINO_WAIT_REPLICAS must be a whole number" in out.stderr
    assert not (tmp_path / "d").exists()  # nothing was started or written
