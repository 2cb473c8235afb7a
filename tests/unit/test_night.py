"""The night file and the license rules (services/night.py, services/license.py): 4620.1-2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.license import (
    GAMES_OF_CHANCE,
    NOT_COUNTED_TOWARD_LIMIT,
    LicenseError,
    check_license_games,
)
from services.night import NightError, load_night, parse_night
from tests.conftest import night_doc


def with_license(games: list[str], **doc: Any) -> dict[str, Any]:
    """A night whose license lists ``games`` (tie option 1 when Black Jack is one)."""
    base = night_doc("org-a", **doc)
    base["license"] = {**base["license"], "games": games}
    if "black_jack" in games:
        base["license"]["tie_option"] = 1
    return base


@pytest.mark.parametrize("option", [1, 2, 3])
def test_the_tie_option_is_the_licenses_4620_5_h(option: int) -> None:
    doc = with_license(["black_jack", "roulette"])
    doc["license"]["tie_option"] = option
    assert parse_night(doc).tie_option == option


@pytest.mark.parametrize("option", [None, 0, 4, "1", True, 1.5])
def test_a_black_jack_license_without_a_valid_tie_option_is_refused(option: Any) -> None:
    doc = with_license(["black_jack", "roulette"])
    if option is None:
        del doc["license"]["tie_option"]
    else:
        doc["license"]["tie_option"] = option
    with pytest.raises(NightError, match="tie_option"):
        parse_night(doc)


def test_a_tie_option_without_black_jack_is_refused() -> None:
    doc = with_license(["roulette"])
    doc["license"]["tie_option"] = 2
    with pytest.raises(NightError, match="tie_option"):
        parse_night(doc)


def test_the_example_night_loads(project_root: Path) -> None:
    night = load_night(project_root / "examples" / "night.toml")
    ids = [t.id for t in night.tables]
    assert "roulette-1" in ids and "roulette-2" in ids
    modes = {t.id: t.outcome_mode for t in night.tables}
    assert modes["roulette-1"] == "dealer" and modes["roulette-2"] == "rng"


def test_five_single_types_are_allowed_4620_2() -> None:
    five = ["roulette", "black_jack", "big_six", "money_wheel", "craps"]
    night = parse_night(with_license([*five, "merchandise_wheel", "raffle", "bell_jar"]))
    assert len(night.games) == 8


def test_a_sixth_single_type_is_refused_4620_2() -> None:
    six = ["roulette", "black_jack", "big_six", "money_wheel", "craps", "hazard"]
    with pytest.raises(NightError, match=r"6 single types.*4620\.2"):
        parse_night(with_license(six))


def test_merchandise_wheels_raffles_and_bell_jars_do_not_count_4620_2() -> None:
    assert set(GAMES_OF_CHANCE) >= NOT_COUNTED_TOWARD_LIMIT
    check_license_games(
        ["roulette", "craps", "hazard", "bang", "big_nine", *NOT_COUNTED_TOWARD_LIMIT]
    )


def test_a_game_part_4620_does_not_permit_is_refused_4620_1() -> None:
    with pytest.raises(LicenseError, match=r"4620\.1"):
        check_license_games(["roulette", "poker_tournament"])


def test_a_table_whose_game_is_not_on_the_license_is_refused_4620_2() -> None:
    doc = with_license(["black_jack"])
    with pytest.raises(NightError, match=r"roulette-1 runs 'roulette'.*not listed on the license"):
        parse_night(doc)


def test_table_options_the_rules_refuse_name_the_table() -> None:
    doc = night_doc("org-a")
    doc["tables"][0]["options"] = {"max_inside": 300}
    with pytest.raises(NightError, match="roulette-1"):
        parse_night(doc)


def test_malformed_nights_are_refused_with_a_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[organization\n")
    with pytest.raises(NightError, match="cannot read"):
        load_night(bad)
    doc = night_doc("org-a")
    del doc["license"]
    with pytest.raises(NightError, match=r"\[license\]"):
        parse_night(doc)
    doc = night_doc("org-a")
    doc["tables"].append(dict(doc["tables"][0]))
    with pytest.raises(NightError, match="unique"):
        parse_night(doc)
    doc = night_doc("org-a")
    doc["tables"][0]["outcome_mode"] = "psychic"
    with pytest.raises(NightError, match="outcome_mode"):
        parse_night(doc)
    with pytest.raises(NightError, match=r"organization\.id"):
        parse_night(night_doc("Org With Spaces"))


def test_a_misspelt_key_is_refused_not_ignored() -> None:
    doc = night_doc("org-a")
    doc["cage"] = {"max_transacton": 5}
    with pytest.raises(NightError, match=r"unknown key.*max_transacton"):
        parse_night(doc)
    doc = night_doc("org-a")
    doc["tables"][0]["outcome"] = "rng"
    with pytest.raises(NightError, match=r"tables\[0\]: unknown key"):
        parse_night(doc)
    with pytest.raises(NightError, match=r"\[cage\] must be a table"):
        parse_night(night_doc("org-a", cage=5))


WHEEL_GAMES = [
    "big_six",
    "big_nine",
    "money_wheel",
    "color_wheel",
    "horse_race_wheel",
    "fruit_wheel",
    "card_wheel",
    "merchandise_wheel",
]


@pytest.mark.parametrize("game", WHEEL_GAMES)
def test_every_wheel_game_opens_from_the_night_file_with_its_default_layout(game: str) -> None:
    doc = with_license([game])
    doc["tables"] = [{"id": "wheel-1", "game": game, "outcome_mode": "rng"}]
    [table] = parse_night(doc).tables
    assert table.game == game and table.config["layout"] == "standard"
    assert len(table.config["sections"]) > 0


def test_seven_wheel_types_need_two_licenses_but_merchandise_wheels_are_free_4620_2() -> None:
    with pytest.raises(NightError, match=r"single types.*4620\.2"):
        parse_night(with_license(WHEEL_GAMES, tables=[]))
    night = parse_night(with_license([*WHEEL_GAMES[:5], "merchandise_wheel"], tables=[]))
    assert "merchandise_wheel" in night.games


@pytest.mark.parametrize(
    "options",
    [
        {"sections": ["$1", "$3"]},  # a bill the money wheel does not have
        {"sections": ["$1", "flag"], "odds": {"flag": [24, 1]}},  # flag below 25 to 1
        {"layout": "deluxe"},  # no such default layout
        {"max_bet": 501},  # over $5, 4620.8(b)(3)
        {"colour": "red"},  # an unknown key
    ],
)
def test_a_wheel_layout_that_does_not_validate_names_the_table(options: dict[str, Any]) -> None:
    doc = with_license(["money_wheel"])
    doc["tables"] = [{"id": "money-1", "game": "money_wheel", "options": options}]
    with pytest.raises(NightError, match="money-1"):
        parse_night(doc)


@pytest.mark.parametrize("player", ["", "p\x00", "p\n1", "p\x7f", "p\x9b", "p\ud800", "p" * 129])
def test_a_listed_player_id_must_be_a_valid_token_subject(player: str) -> None:
    # Each listed player gets a token at start, with the id as its sub.
    with pytest.raises(NightError, match=r"players\[1\]: player id"):
        parse_night(night_doc("org-a", players=["p-1", player]))
    assert parse_night(night_doc("org-a", players=["p-1", "Zoë B."])).players == ("p-1", "Zoë B.")
