"""The house edges docs/RULES.md states for Beat the Dealer (4620.14) and Bang (4620.15),
each recomputed by enumerating every outcome through the games' own pure settlement, with
exact fractions; the doc's tables are parsed, so a figure that drifts from the code fails."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from services.games.bang import ODDS, BangBet, settle_roll
from services.games.beat_the_dealer import player_wins

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]
ROW = re.compile(
    r"^\| `(?P<bet>[a-z_]+)`(?P<how> per roll| per decision)? \| (?P<odds>\d+) \| "
    r"(?P<outcomes>[\d,]+) \| (?P<wins>\d+) \| (?P<edge>\d+/\d+) \| (?P<pct>[\d.]+) % \|$"
)


def edge_table(project_root: Path, section: str) -> dict[str, dict[str, str]]:
    text = (project_root / "docs" / "RULES.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    edges = body.split("### House edges", 1)[1]
    rows = [m.groupdict() for line in edges.splitlines() if (m := ROW.match(line))]
    return {r["bet"] + (r["how"] or ""): r for r in rows}


def one(kind: str) -> BangBet:
    return BangBet(bet_id="b", player="p", kind=kind, amount=1, round=1)


def enumerate_bet(kind: str) -> tuple[int, int, int, Fraction]:
    """(outcomes, winning, losing, expected net per unit) of one Bang bet over its outcomes:
    a one-roll or big bet over the 36 rolls (the dealer's roll, which decides every inside
    bet), Hi Dice over the 1,296 (point, shooter's roll) pairs."""
    net = Fraction(0)
    wins = losses = outcomes = 0
    pairs = (
        [(None, r) for r in ROLLS] if kind != "hi_dice" else [(p, r) for p in ROLLS for r in ROLLS]
    )
    for point, roll in pairs:
        outcomes += 1
        settled = settle_roll([one(kind)], sum(roll), None if point is None else sum(point))
        for s in settled:
            net += s.paid - s.amount
            wins += s.result == "won"
            losses += s.result == "lost"
    return outcomes, wins, losses, net / outcomes


def check_row(row: dict[str, str], odds: int, outcomes: int, wins: int, edge: Fraction) -> None:
    assert int(row["odds"]) == odds
    assert int(row["outcomes"].replace(",", "")) == outcomes
    assert int(row["wins"]) == wins
    assert Fraction(row["edge"]) == edge
    assert row["pct"] == f"{float(edge * 100):.2f}"


def test_beat_the_dealers_edge_over_the_1296_rolls(project_root: Path) -> None:
    table = edge_table(project_root, "Beat the Dealer (4620.14)")
    assert list(table) == ["beat_the_dealer"]
    wins = sum(player_wins(sum(d), sum(p)) for d in ROLLS for p in ROLLS)
    ties = sum(sum(d) == sum(p) for d in ROLLS for p in ROLLS)
    edge = 1 - Fraction(2 * wins, 1296)
    check_row(table["beat_the_dealer"], 1, 1296, wins, edge)
    assert (wins, ties) == (575, 146)
    assert edge == Fraction(ties, 1296)  # by symmetry the edge is the chance of a tie
    text = (project_root / "docs" / "RULES.md").read_text()
    assert "ties 146" in text


@pytest.mark.parametrize("kind", ["field", "under_seven", "any_seven", "over_seven", "hi_dice"])
def test_bangs_bets_of_one_decision(project_root: Path, kind: str) -> None:
    row = edge_table(project_root, "Bang (4620.15)")[kind]
    outcomes, wins, losses, net = enumerate_bet(kind)
    assert wins + losses == outcomes  # every outcome decides these bets
    check_row(row, ODDS[kind], outcomes, wins, -net)


@pytest.mark.parametrize("kind", ["big_six", "big_eight"])
def test_big_six_and_eight_per_roll_and_per_decision(project_root: Path, kind: str) -> None:
    table = edge_table(project_root, "Bang (4620.15)")
    outcomes, wins, losses, net = enumerate_bet(kind)
    check_row(table[f"{kind} per roll"], 1, outcomes, wins, -net)
    # per decision: the rolls that decide nothing are left out (the bet stays up)
    per_decision = -net * outcomes / (wins + losses)
    check_row(table[f"{kind} per decision"], 1, wins + losses, wins, per_decision)
    assert (wins, losses) == (5, 6)


def test_every_bang_bet_has_its_row_and_favours_the_house(project_root: Path) -> None:
    table = edge_table(project_root, "Bang (4620.15)")
    expected = {k for k in ODDS if not k.startswith("big_")} | {
        f"{k} {how}" for k in ("big_six", "big_eight") for how in ("per roll", "per decision")
    }
    assert set(table) == expected
    assert all(Fraction(r["edge"]) > 0 for r in table.values())
