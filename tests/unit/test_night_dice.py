"""The night file and the dice games: the example dice night (all five), the two names of
Over and Under Seven (4620.1(h), 4620.13), and Craps and Best Poker Hand, which a license may
list but whose tables cannot open (``rules_not_available``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.games.registry import game
from services.license import (
    GAME_ALIASES,
    GAMES_OF_CHANCE,
    LicenseError,
    canonical_game,
    check_license_games,
)
from services.night import NightError, load_night, parse_night
from tests.conftest import night_doc


def with_games(games: list[str], tables: list[dict[str, Any]]) -> dict[str, Any]:
    doc = night_doc("org-a")
    doc["license"] = {**doc["license"], "games": games}
    doc["tables"] = tables
    return doc


def test_the_example_dice_night_loads(project_root: Path) -> None:
    night = load_night(project_root / "examples" / "dice-night.toml")
    games = {t.id: (t.game, t.outcome_mode) for t in night.tables}
    assert games == {
        "chuck-a-luck-1": ("chuck_a_luck", "dealer"),
        "hazard-1": ("hazard", "rng"),
        "over-under-1": ("under_and_over_seven", "dealer"),
        "beat-the-dealer-1": ("beat_the_dealer", "rng"),
        "bang-1": ("bang", "dealer"),
    }
    assert night.table("hazard-1").config == {"min_bet": 25, "max_bet": 500}  # type: ignore[union-attr]
    bang = night.table("bang-1")
    assert bang is not None and game(bang.game).parse_config(bang.config)["seats"] == 10
    # Every dice game on one license: exactly the five single types of 4620.2.
    check_license_games(list(night.games))
    assert len(night.games) == 5


def test_the_dice_games_are_permitted_under_their_4620_1_names() -> None:
    for name in ("chuck_a_luck", "hazard", "under_and_over_seven"):
        assert name in GAMES_OF_CHANCE
    assert GAME_ALIASES == {"over_and_under_seven": "under_and_over_seven"}
    assert canonical_game("over_and_under_seven") == "under_and_over_seven"
    assert canonical_game("hazard") == "hazard"


def test_both_names_of_over_and_under_seven_are_one_type_4620_2() -> None:
    five = ["roulette", "black_jack", "hazard", "chuck_a_luck", "under_and_over_seven"]
    check_license_games([*five, "over_and_under_seven"])  # still five types
    with pytest.raises(LicenseError, match="6 single types"):
        check_license_games([*five, "big_six"])
    doc = with_games(["under_and_over_seven"], [{"id": "ou-1", "game": "over_and_under_seven"}])
    assert parse_night(doc).tables[0].game == "under_and_over_seven"


def test_a_table_of_a_game_not_on_the_license_is_still_refused() -> None:
    doc = with_games(["hazard"], [{"id": "ou-1", "game": "over_and_under_seven"}])
    with pytest.raises(NightError, match="not listed on the license") as info:
        parse_night(doc)
    assert info.value.code == "invalid_night"


@pytest.mark.parametrize(("game", "section"), [("craps", "4620.3"), ("best_poker_hand", "4620.18")])
def test_craps_and_best_poker_hand_may_stand_on_a_license(game: str, section: str) -> None:
    night = parse_night(with_games(["hazard", game], [{"id": "hz-1", "game": "hazard"}]))
    assert game in night.games


@pytest.mark.parametrize(("game", "section"), [("craps", "4620.3"), ("best_poker_hand", "4620.18")])
def test_their_tables_are_refused_rules_not_available(game: str, section: str) -> None:
    doc = with_games([game], [{"id": "t-1", "game": game, "outcome_mode": "dealer"}])
    with pytest.raises(NightError) as info:
        parse_night(doc)
    assert info.value.code == "rules_not_available"
    assert f"the text of 9 NYCRR {section} " in str(info.value)
    assert "t-1" in str(info.value)


def test_a_refused_dice_table_option_keeps_the_games_code() -> None:
    doc = with_games(["hazard"], [{"id": "hz-1", "game": "hazard", "options": {"max_bet": 600}}])
    with pytest.raises(NightError, match=r"hz-1.*4620\.12\(c\)\(7\)\(ii\)") as info:
        parse_night(doc)
    assert info.value.code == "invalid_config"
    other = with_games(["hazard"], [{"id": "hz 1", "game": "hazard"}])
    with pytest.raises(NightError) as info:
        parse_night(other)
    assert info.value.code == "invalid_night"
