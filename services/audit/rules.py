"""The audit's checkers that recompute what the games', raffles' and deals' pure rules
give (settlements, awards, drawings, banks, commitments, outcome sources)."""

from __future__ import annotations

from collections.abc import Callable

from services.audit.base import Checker

RULE_CHECKERS: tuple[Callable[[], Checker], ...] = ()
"""A fresh checker of each kind, in the order the report lists them."""
