"""What every reader of a table sees of it: the table's part and its game's public view."""

from __future__ import annotations

from typing import Any

from services.tables.rules import TableState, round_view, table_game


def table_view(state: TableState) -> dict[str, Any]:
    """What a tablet shows of a table (``GET /api/tables/{id}``): the table's part and
    what its game shows every reader (never a secret, such as a face-down card)."""
    view: dict[str, Any] = {
        "table": state.table,
        "game": state.game,
        "config": state.config,
        "outcome_mode": state.outcome_mode,
        "closed": state.closed,
        "seq": state.version,
        "round": state.round,
        "phase": state.phase,
        "bets": [
            {"bet_id": b.bet_id, "player": b.player, "bet": b.bet, "amount": b.amount}
            for b in state.bets.values()
        ],
    }
    if state.opened:
        view.update(table_game(state).view(state.config, state.play, round_view(state)))
    return view
