"""``casino-night forms``'s arguments, refused before it reaches any store (exit 2 with
the reason on stderr); the command against a real store is in tests/e2e/test_forms.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli import main


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--form", "gc9", "--out", "x"], "no form 'gc9'; forms: gc7, gc7b"),
        (["--key", "2026-11-29", "--out", "x"], "--key goes with --form"),
        (["--form", "gc7"], "say where to write the forms with --out DIR"),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(
    args: list[str], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["forms", "--data-dir", str(tmp_path), *args]) == 2
    assert reason in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written, no store started
