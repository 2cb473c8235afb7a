"""The example dice night (examples/dice-night.toml) loads: a Beat the Dealer and a Bang
table, within the five single types of 4620.2."""

from __future__ import annotations

from pathlib import Path

from services.games.registry import game
from services.night import load_night


def test_the_example_dice_night_loads(project_root: Path) -> None:
    night = load_night(project_root / "examples" / "dice-night.toml")
    tables = {t.id: t for t in night.tables}
    assert {t.game for t in tables.values()} == {"beat_the_dealer", "bang"}
    bang = tables["bang-1"]
    assert game(bang.game).parse_config(bang.config)["seats"] == 10
