"""Every limit the server enforces, as a named setting with where it comes from.

Regulatory maxima sit beside the rules they belong to (roulette's in
``services.games.roulette``); this module holds the cross-cutting ones.
"""

from __future__ import annotations

MAX_SAFE_AMOUNT_CENTS = 2**53 - 1
"""Largest amount a command may carry: the largest integer every JSON client reads exactly.
Larger amounts are refused with ``over_limit`` before they reach any rule."""

MAX_CHIP_PURCHASE_CENTS = 1_000_000
"""Largest single chip sale or cash-out at the cage ($10,000). Part 4620 sets no such cap:
this is an operator setting (``cage.max_transaction`` in the night file) against typing
errors, not a regulatory limit."""

OCCASION_MAX_HOURS = 14
"""An occasion (one casino night) lasts at most 14 consecutive hours (our reading,
docs/RULES.md "Occasions")."""

MAX_SINGLE_GAME_TYPES = 5
"""No more than five single types of games of chance in one license period, merchandise
wheels, raffles, bell jars, coin boards, merchandise boards and seal cards excluded, 4620.2."""
