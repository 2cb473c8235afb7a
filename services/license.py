"""The license: which games a night may run (4620.1, 4620.2), and its stream's pure rules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from events.base import Event
from events.envelope import Envelope
from events.license import LicenseRecorded, OccasionStarted
from services.aggregates import RuleError
from services.limits import MAX_SINGLE_GAME_TYPES

GAMES_OF_CHANCE = (
    "craps",
    "roulette",
    "black_jack",
    "big_six",
    "money_wheel",
    "chuck_a_luck",
    "hazard",
    "under_and_over_seven",
    "beat_the_dealer",
    "merchandise_wheel",
    "big_nine",
    "color_wheel",
    "bang",
    "joker_seven",
    "horse_race_wheel",
    "best_poker_hand",
    "bell_jar",
    "coin_board",
    "merchandise_board",
    "seal_card",
    "fruit_wheel",
    "card_wheel",
    "raffle",
)
"""The games of chance Part 4620 permits, 4620.1(a)-(t) (bell jar including coin boards,
merchandise boards and seal cards, 4620.1(q))."""

GAME_ALIASES: Mapping[str, str] = {"over_and_under_seven": "under_and_over_seven"}
"""Other names of a game of :data:`GAMES_OF_CHANCE`: 4620.1(h) lists "Under and Over Seven",
the heading of 4620.13 says "Over and Under Seven"; one game, both names accepted."""

RULES_NOT_AVAILABLE: Mapping[str, str] = {
    "craps": "4620.3 (Craps)",
    "best_poker_hand": "4620.18 (Best Poker Hand)",
}
"""Games 4620.1 permits (a license may list them) whose section text this server does not
have, so it cannot open their tables (``rules_not_available``): the section of each."""


def canonical_game(name: str) -> str:
    """The one name of a game, whichever of its names (:data:`GAME_ALIASES`) is given; any
    other name unchanged. Every game name a night file gives is read through it."""
    return GAME_ALIASES.get(name, name)


NOT_COUNTED_TOWARD_LIMIT = frozenset(
    {"merchandise_wheel", "raffle", "bell_jar", "coin_board", "merchandise_board", "seal_card"}
)
"""Games that do not count toward the five single types of 4620.2."""


def occasion_open(starts_at: int | None, ends_at: int | None, now: int) -> bool:
    """Whether an occasion with this window (unix ms; None: not set) is open at ``now``.

    An occasion is one casino night of at most 14 consecutive hours (our reading,
    docs/RULES.md "Occasions"; see ``services.limits.OCCASION_MAX_HOURS``); games are
    played only during it."""
    if starts_at is not None and now < starts_at:
        return False
    return not (ends_at is not None and now >= ends_at)


class LicenseError(ValueError):
    """A night the license does not allow; the message says which rule and why."""


def check_license_games(games: Sequence[str]) -> None:
    """At most five single types of games besides the excluded ones, all permitted, 4620.1-2
    (a game listed under both its names is one type)."""
    games = [canonical_game(g) for g in games]
    unknown = sorted(set(games) - set(GAMES_OF_CHANCE))
    if unknown:
        raise LicenseError(
            f"license lists games Part 4620 does not permit (4620.1): {', '.join(unknown)}"
        )
    counted = sorted(set(games) - NOT_COUNTED_TOWARD_LIMIT)
    if len(counted) > MAX_SINGLE_GAME_TYPES:
        raise LicenseError(
            f"license lists {len(counted)} single types of games ({', '.join(counted)}); "
            f"4620.2 allows at most {MAX_SINGLE_GAME_TYPES} in one license period, "
            "merchandise wheels, raffles and bell jars excluded"
        )


def check_game_licensed(table: str, game: str, games: Iterable[str]) -> None:
    """No game may be conducted unless it is listed on the license, 4620.2 (under either
    of its names)."""
    if canonical_game(game) not in {canonical_game(g) for g in games}:
        raise LicenseError(
            f"table {table} runs {game!r}, which is not listed on the license (4620.2)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LicenseState:
    version: int = 0
    recorded: LicenseRecorded | None = None
    windows: Mapping[str, tuple[int | None, int | None]] = field(default_factory=dict)
    """Every occasion started, with its window (unix ms; None where not set)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordLicense:
    license: LicenseRecorded


@dataclass(frozen=True, slots=True, kw_only=True)
class StartOccasion:
    occasion: str
    name: str
    starts_at: int | None = None
    ends_at: int | None = None


LicenseCommand = RecordLicense | StartOccasion


def decide(state: LicenseState, command: LicenseCommand) -> list[Event]:
    """Record the license when it is new or changed; start an occasion once."""
    if isinstance(command, RecordLicense):
        return [] if state.recorded == command.license else [command.license]
    window = (command.starts_at, command.ends_at)
    recorded = state.windows.get(command.occasion)
    if recorded is not None:
        if recorded != window:
            raise RuleError(
                "conflict",
                f"occasion {command.occasion} was started with another window; "
                "an occasion's hours are fixed once recorded",
            )
        return []
    return [
        OccasionStarted(
            occasion=command.occasion,
            name=command.name,
            starts_at=command.starts_at,
            ends_at=command.ends_at,
        )
    ]


def evolve(state: LicenseState, event: Event) -> LicenseState:
    version = state.version + 1
    if isinstance(event, LicenseRecorded):
        return replace(state, version=version, recorded=event)
    if isinstance(event, OccasionStarted):
        windows = {**state.windows, event.occasion: (event.starts_at, event.ends_at)}
        return replace(state, version=version, windows=windows)
    return replace(state, version=version)


class LicenseRules:
    """The license stream's rules for the generic actor."""

    def initial(self, stream: str) -> LicenseState:
        return LicenseState()

    def decide(self, state: LicenseState, command: LicenseCommand) -> list[Event]:
        return decide(state, command)

    def evolve(self, state: LicenseState, event: Event) -> LicenseState:
        return evolve(state, event)

    def correlation(self, state: LicenseState) -> str | None:
        return None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []

    def debtors(self, state: LicenseState, command: LicenseCommand) -> Sequence[str]:
        return ()

    def result(self, state: LicenseState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        return {"seq": envelopes[-1].seq if envelopes else state.version}
