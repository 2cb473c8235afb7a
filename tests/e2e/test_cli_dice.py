"""``casino-night serve`` with the dice night: the real command refuses a Craps or Best Poker
Hand table with its code and the section, and starts nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.serve import EXE

NIGHT = """
[organization]
id = "org-dice"
name = "Dice"
[license]
number = "GC-1"
games = ["hazard", "over_and_under_seven", "{game}"]
period_start = "2026-11-01"
period_end = "2026-11-30"
[occasion]
id = "n1"
name = "N"
[[tables]]
id = "hazard-1"
game = "hazard"
[[tables]]
id = "{game}-1"
game = "{game}"
"""


@pytest.mark.parametrize(("game", "section"), [("craps", "4620.3"), ("best_poker_hand", "4620.18")])
def test_serve_refuses_a_table_whose_rules_are_not_available(
    tmp_path: Path, game: str, section: str
) -> None:
    night = tmp_path / "night.toml"
    night.write_text(NIGHT.format(game=game))
    data = tmp_path / "d"
    out = subprocess.run(
        [str(EXE), "serve", "--night", str(night), "--data-dir", str(data)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(
        f"casino-night: refusing to start: [rules_not_available] table {game}-1: "
        f"the text of 9 NYCRR {section} "
    ), out.stderr
    assert not data.exists()  # refused before anything was written
