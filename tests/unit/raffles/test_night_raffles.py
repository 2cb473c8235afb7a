"""Raffles in the night file (``[[raffles]]``, services/night.py): strict keys, licensed,
settings checked at load, date-times as RFC 3339."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from services.night import NightError, load_night, parse_night
from tests.conftest import night_doc


def doc(raffle: dict[str, Any], games: tuple[str, ...] = ("roulette", "raffle")) -> dict[str, Any]:
    base = night_doc("org-r", raffles=[raffle])
    base["license"] = {**base["license"], "games": list(games)}
    return base


QOH: dict[str, Any] = {
    "id": "qoh-1",
    "kind": "queen_of_hearts",
    "options": {
        "name": "Search for the Queen of Hearts",
        "location": "Parish hall",
        "price": 200,
        "first_drawing_at": "2026-12-04T19:00:00-05:00",
        "board": "server",
        "triple_draws": True,
    },
}


def test_a_declared_raffle_loads_with_times_in_unix_ms() -> None:
    night = parse_night(doc(QOH))
    (spec,) = night.raffles
    assert spec.id == "qoh-1" and spec.kind == "queen_of_hearts"
    assert spec.options["first_drawing_at"] == 1_796_428_800_000
    assert spec.options["organization"] == "Test org org-r"  # the night's organization


def test_a_toml_date_time_is_taken_too() -> None:
    text = """
    [[raffles]]
    id = "std-1"
    kind = "standard"
    [raffles.options]
    name = "Spring raffle"
    location = "Hall"
    price = 500
    first_drawing_at = 2026-12-04T19:00:00-05:00
    prizes = [{description = "Quilt", value = 20000, cash = false}]
    """
    raw = tomllib.loads(text)
    (spec,) = parse_night(doc(raw["raffles"][0])).raffles
    assert spec.options["first_drawing_at"] == 1_796_428_800_000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, "unknown key"),
        ({"kind": "bingo"}, "kind must be one of"),
        ({"options": {**QOH["options"], "price": -1}}, "price"),
        ({"options": {**QOH["options"], "first_drawing_at": "soon"}}, "RFC 3339"),
        ({"id": "Bad Id"}, "must match"),
        # Commitments come from the board the server deals, never from a settings file.
        ({"options": {**QOH["options"], "board": {"mode": "server"}}}, "board must be"),
    ],
)
def test_a_bad_raffle_refuses_the_night(change: dict[str, Any], message: str) -> None:
    with pytest.raises(NightError, match=message):
        parse_night(doc({**QOH, **change}))


def test_a_raffle_needs_raffles_on_the_license() -> None:
    """4620.2: no game that is not listed on the license."""
    with pytest.raises(NightError, match="not listed on the license"):
        parse_night(doc(QOH, games=("roulette",)))


def test_raffle_ids_are_unique() -> None:
    base = doc(QOH)
    base["raffles"] = [QOH, QOH]
    with pytest.raises(NightError, match="unique"):
        parse_night(base)


def test_the_example_night_declares_its_raffles(project_root: Path) -> None:
    night = load_night(project_root / "examples" / "night.toml")
    assert {r.kind for r in night.raffles} == {"queen_of_hearts", "fifty_fifty", "treasure_chest"}
