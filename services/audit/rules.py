"""The audit's checkers that recompute what the games', raffles' and deals' pure rules
give (settlements, awards, drawings, banks, commitments, outcome sources, expenses): docs/AUDIT.md,
"What the audit recomputes"."""

from __future__ import annotations

from collections.abc import Callable

from services.audit.awards import AwardChecker
from services.audit.base import Checker
from services.audit.commitments import CommitmentChecker
from services.audit.deals import DealChecker
from services.audit.expenses import ExpenseChecker
from services.audit.raffles import DrawingChecker
from services.audit.settlements import SettlementChecker
from services.audit.sources import SourceChecker

RULE_CHECKERS: tuple[Callable[[], Checker], ...] = (
    SettlementChecker,
    AwardChecker,
    DrawingChecker,
    DealChecker,
    CommitmentChecker,
    SourceChecker,
    ExpenseChecker,
)
"""A fresh checker of each kind, in the order the report lists them."""
