"""The night file: organization, license, occasion, cage, tables and raffles, in TOML.

Validated in full at start; a night the license does not allow (4620.2) or a table whose
options the rules refuse is refused with a message naming the table and the rule.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from services.aggregates import RuleError
from services.bell_jars.limits import DEFAULT_LIMITS, DEFAULT_TIMEZONE, DealLimits
from services.games.registry import GAMES
from services.license import (
    RULES_NOT_AVAILABLE,
    LicenseError,
    canonical_game,
    check_game_licensed,
    check_license_games,
)
from services.limits import MAX_CHIP_PURCHASE_CENTS, OCCASION_MAX_HOURS
from services.raffles.config_input import raffle_options
from services.raffles.rules import parse_config as parse_raffle_config
from services.text import name_problem

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
"""Organization, table and occasion ids: lower-case letters, digits, ``-`` and ``_``."""


class NightError(ValueError):
    """The night file cannot run: the message says where and why, the code what kind of
    refusal (``invalid_night`` unless said otherwise; ``rules_not_available`` for a table of
    a game whose section text the server does not have; ``invalid_config`` for table
    options the game's rules refuse)."""

    def __init__(self, message: str, code: str = "invalid_night") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    id: str
    game: str
    outcome_mode: str
    config: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class RaffleSpec:
    """A raffle the night file declares (``[[raffles]]``): set up at start when new, and
    checked to be the same raffle when it already runs (a raffle spans many nights)."""

    id: str
    kind: str
    options: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Night:
    organization: str
    organization_name: str
    license_number: str
    games: tuple[str, ...]
    tie_option: int | None = None
    """The Black Jack tie option on the license, 4620.5(h) (None without Black Jack)."""
    period_start: str
    period_end: str
    occasion: str
    occasion_name: str
    occasion_starts_at: int | None = None
    """Unix ms when the occasion begins; None: the night file sets no window."""
    occasion_ends_at: int | None = None
    max_transaction: int = MAX_CHIP_PURCHASE_CENTS
    tables: tuple[TableSpec, ...] = ()
    players: tuple[str, ...] = field(default=())
    raffles: tuple[RaffleSpec, ...] = ()
    timezone: str = DEFAULT_TIMEZONE
    """The organization's IANA timezone (``[organization] timezone``): its calendar quarters
    (the bell jar GC-7Q) and its dates (a redeemed ticket's retention)."""
    deal_limits: DealLimits = DEFAULT_LIMITS
    """The bell jar limits in force (``[bell_jars]``; each only lowers its statutory figure,
    ``services.bell_jars.limits``)."""

    member_in_charge: str = ""
    """Who subscribes the forms (``[reports] member_in_charge``; blank: filled in by hand)."""
    use_of_proceeds: str = ""
    """The use the net proceeds are applied to, the GC-7's Part E (``[reports]
    use_of_proceeds``; blank: filled in by hand, GML 195-f(1))."""

    def table(self, table_id: str) -> TableSpec | None:
        return next((t for t in self.tables if t.id == table_id), None)


ALLOWED_KEYS: Mapping[str, frozenset[str]] = {
    "": frozenset(
        {
            "organization",
            "license",
            "occasion",
            "cage",
            "tables",
            "players",
            "raffles",
            "bell_jars",
            "reports",
        }
    ),
    "reports": frozenset({"member_in_charge", "use_of_proceeds"}),
    "organization": frozenset({"id", "name", "timezone"}),
    "bell_jars": frozenset({"max_ticket_price", "max_single_prize", "max_deal_prizes"}),
    "license": frozenset({"number", "games", "period_start", "period_end", "tie_option"}),
    "occasion": frozenset({"id", "name", "starts_at", "hours"}),
    "cage": frozenset({"max_transaction"}),
    "tables": frozenset({"id", "game", "outcome_mode", "options"}),
    "raffles": frozenset({"id", "kind", "options"}),
}
"""Every key a night file may use: a misspelt key is refused, never silently ignored."""


def _known_keys(section: Mapping[str, Any], kind: str, where: str) -> None:
    unknown = sorted(set(section) - ALLOWED_KEYS[kind])
    if unknown:
        raise NightError(f"{where or 'the night file'}: unknown key(s) {', '.join(unknown)}")


def _section(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    section = doc.get(name, {})
    if not isinstance(section, dict):
        raise NightError(f"[{name}] must be a table")
    _known_keys(section, name, name)
    return section


def _str(section: Mapping[str, Any], key: str, where: str) -> str:
    value = section.get(key)
    if not isinstance(value, str) or not value:
        raise NightError(f"{where}.{key} must be a non-empty string")
    return value


def _id(section: Mapping[str, Any], key: str, where: str) -> str:
    value = _str(section, key, where)
    if not ID_PATTERN.match(value):
        raise NightError(f"{where}.{key} {value!r} must match {ID_PATTERN.pattern}")
    return value


def _table(
    raw: Any, index: int, games: tuple[str, ...], tie_option: int | None = None
) -> TableSpec:
    where = f"tables[{index}]"
    if not isinstance(raw, dict):
        raise NightError(f"{where} must be a table")
    _known_keys(raw, "tables", where)
    table_id = _id(raw, "id", where)
    game = canonical_game(_str(raw, "game", where))
    try:
        check_game_licensed(table_id, game, games)
    except LicenseError as e:
        raise NightError(str(e)) from None
    if game in RULES_NOT_AVAILABLE:
        raise NightError(
            f"table {table_id}: the text of 9 NYCRR {RULES_NOT_AVAILABLE[game]} is not "
            "available to this server, so it has no rules to run the game by; the game may "
            "stand on the license, but its tables cannot open until the text is supplied",
            code="rules_not_available",
        )
    if game not in GAMES:
        raise NightError(f"table {table_id}: this server has no rules for {game!r} yet")
    mode = raw.get("outcome_mode", "dealer")
    if mode not in ("dealer", "rng"):
        raise NightError(f"table {table_id}: outcome_mode must be 'dealer' or 'rng'")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise NightError(f"table {table_id}: options must be a table")
    if game == BLACK_JACK:
        if "tie_option" in options:
            raise NightError(
                f"table {table_id}: the tie option is the license's (license.tie_option, "
                "4620.5(h)), not a table option"
            )
        options = {**options, "tie_option": tie_option}
    try:
        config = GAMES[game].parse_config(options)
    except RuleError as e:
        raise NightError(f"table {table_id}: {e.message}", code=e.code) from None
    return TableSpec(id=table_id, game=game, outcome_mode=mode, config=config)


BLACK_JACK = "black_jack"
TIE_OPTIONS = (1, 2, 3)
"""The tie options of 4620.5(h): 1 all ties push; 2 push on natural 21 only; 3 house wins
all ties."""


def _tie_option(lic: Mapping[str, Any], games: tuple[str, ...]) -> int | None:
    """The license's Black Jack tie option: required, 1 to 3, when the license lists Black
    Jack (4620.5(h): "The license shall reflect one of the following options"); not allowed
    otherwise."""
    option = lic.get("tie_option")
    if BLACK_JACK not in games:
        if option is not None:
            raise NightError("license.tie_option is for a license that lists black_jack")
        return None
    if isinstance(option, bool) or option not in TIE_OPTIONS:
        raise NightError(
            "a license that lists black_jack must set license.tie_option to 1, 2 or 3 "
            f"(4620.5(h)), not {option!r}"
        )
    return int(option)


def _raffle(raw: Any, index: int, games: tuple[str, ...], organization: str) -> RaffleSpec:
    """A declared raffle: licensed (4620.2), of a known kind, with settings the rules take
    (a server-dealt Queen of Hearts board is dealt by the raffle's actor when the raffle
    opens, so it is checked here with placeholder commitments)."""
    where = f"raffles[{index}]"
    if not isinstance(raw, dict):
        raise NightError(f"{where} must be a table")
    _known_keys(raw, "raffles", where)
    raffle_id = _id(raw, "id", where)
    kind = _str(raw, "kind", where)
    try:
        check_game_licensed(raffle_id, "raffle", games)
    except LicenseError as e:
        raise NightError(str(e)) from None
    try:
        options = raffle_options(raw.get("options", {}), organization=organization)
        placeholder = ("0" * 64,) * 54 if options.get("board") == "server" else ()
        parse_raffle_config(kind, options, placeholder)
    except RuleError as e:
        raise NightError(f"raffle {raffle_id}: {e.message}") from None
    return RaffleSpec(id=raffle_id, kind=kind, options=options)


def _occasion_window(occ: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """``starts_at`` (an RFC 3339 date-time with its UTC offset) and ``hours`` (at most
    14, the default) as unix ms; an occasion is at most 14 consecutive hours (our reading,
    docs/RULES.md "Occasions")."""
    hours = occ.get("hours", OCCASION_MAX_HOURS)
    if (
        isinstance(hours, bool)
        or not isinstance(hours, int)
        or not 1 <= hours <= OCCASION_MAX_HOURS
    ):
        raise NightError(f"occasion.hours must be a whole number from 1 to {OCCASION_MAX_HOURS}")
    raw = occ.get("starts_at")
    if raw is None:
        if "hours" in occ:
            raise NightError("occasion.hours needs occasion.starts_at")
        return None, None
    if isinstance(raw, str):
        try:
            raw = datetime.fromisoformat(raw)
        except ValueError:
            raise NightError(f"occasion.starts_at {raw!r} is not an RFC 3339 date-time") from None
    if not isinstance(raw, datetime) or raw.tzinfo is None:
        raise NightError("occasion.starts_at must be a date-time with its UTC offset")
    starts = int(raw.timestamp() * 1000)
    return starts, starts + hours * 3_600_000


def parse_night(doc: Mapping[str, Any]) -> Night:
    """Validate a parsed night file; raise NightError with a clear message."""
    _known_keys(doc, "", "")
    if not all(name in doc for name in ("organization", "license", "occasion")):
        raise NightError("the night file needs [organization], [license] and [occasion]")
    org = _section(doc, "organization")
    lic = _section(doc, "license")
    occ = _section(doc, "occasion")
    starts_at, ends_at = _occasion_window(occ)
    games_raw = lic.get("games")
    if not isinstance(games_raw, list) or not all(isinstance(g, str) for g in games_raw):
        raise NightError("license.games must be a list of game names")
    games = tuple(canonical_game(g) for g in games_raw)
    try:
        check_license_games(games)
    except LicenseError as e:
        raise NightError(str(e)) from None
    cage = _section(doc, "cage")
    max_transaction = cage.get("max_transaction", MAX_CHIP_PURCHASE_CENTS)
    if (
        isinstance(max_transaction, bool)
        or not isinstance(max_transaction, int)
        or max_transaction <= 0
    ):
        raise NightError("cage.max_transaction must be a positive number of cents")
    tables_raw = doc.get("tables", [])
    if not isinstance(tables_raw, list):
        raise NightError("tables must be an array of tables ([[tables]])")
    tie_option = _tie_option(lic, games)
    tables = tuple(_table(t, i, games, tie_option) for i, t in enumerate(tables_raw))
    ids = [t.id for t in tables]
    if len(set(ids)) != len(ids):
        raise NightError("table ids must be unique")
    raffles_raw = doc.get("raffles", [])
    if not isinstance(raffles_raw, list):
        raise NightError("raffles must be an array of tables ([[raffles]])")
    org_name = _str(org, "name", "organization")
    raffles = tuple(_raffle(r, i, games, org_name) for i, r in enumerate(raffles_raw))
    if len({r.id for r in raffles}) != len(raffles):
        raise NightError("raffle ids must be unique")
    players = doc.get("players", [])
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise NightError("players must be a list of player ids")
    for i, player in enumerate(players):
        problem = name_problem(player)
        if problem is not None:  # each listed player gets a token, whose sub it is
            raise NightError(f"players[{i}]: player id {player!r} {problem}")
    reports = _section(doc, "reports")
    for key in ("member_in_charge", "use_of_proceeds"):
        if not isinstance(reports.get(key, ""), str):
            raise NightError(f"reports.{key} must be a string")
    return Night(
        member_in_charge=reports.get("member_in_charge", ""),
        use_of_proceeds=reports.get("use_of_proceeds", ""),
        timezone=_timezone(org),
        deal_limits=_deal_limits(_section(doc, "bell_jars")),
        organization=_id(org, "id", "organization"),
        organization_name=_str(org, "name", "organization"),
        license_number=_str(lic, "number", "license"),
        games=games,
        tie_option=tie_option,
        period_start=_str(lic, "period_start", "license"),
        period_end=_str(lic, "period_end", "license"),
        occasion=_id(occ, "id", "occasion"),
        occasion_name=_str(occ, "name", "occasion"),
        occasion_starts_at=starts_at,
        occasion_ends_at=ends_at,
        max_transaction=max_transaction,
        tables=tables,
        players=tuple(players),
        raffles=raffles,
    )


def _timezone(org: Mapping[str, Any]) -> str:
    """``[organization] timezone``: an IANA name the server knows (default New York)."""
    name = org.get("timezone", DEFAULT_TIMEZONE)
    try:
        if not isinstance(name, str) or not name or name.startswith(("/", ".")):
            raise ValueError
        ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):
        raise NightError(
            f"organization.timezone {name!r} must be an IANA timezone such as America/New_York"
        ) from None
    return name


def _deal_limits(section: Mapping[str, Any]) -> DealLimits:
    """``[bell_jars]``: the limits in force, each at most its statutory figure."""
    limits = DealLimits(**section)
    problem = limits.problem()
    if problem is not None:
        raise NightError(problem)
    return limits


def load_night(path: Path) -> Night:
    try:
        doc = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise NightError(f"cannot read night file {path}: {e}") from None
    return parse_night(doc)
