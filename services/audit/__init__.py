"""The audit: everything the org log proves, recomputed from the log alone (docs/AUDIT.md)."""

from services.audit.balances import BalanceReport, verify_balances

__all__ = ["BalanceReport", "verify_balances"]
