"""``GET /api/tables/{id}/rounds/{n}``: one round of a table as it happened (game recall,
docs/AUDIT.md "Game recall"; :mod:`services.recall` builds it)."""

from __future__ import annotations

from aiohttp import web

from services.actor import error_reply
from services.aggregates import table_stream
from services.gateway.auth import Principal
from services.gateway.transport import RUNTIME, forbidden, json_view
from services.recall import RecallTooCostly, parse_round_number, read_round, recall_round

RECALL_READERS = frozenset({"auditor", "ops", "member_in_charge"})
"""Who recalls any table's rounds: the people who answer a regulator or settle a dispute.
A dealer recalls the rounds of their own tables; a player none (a recall names every
player's bets and results: a player asks a member in charge)."""


def may_recall(who: Principal, table: str) -> bool:
    """Whether ``who`` may recall the rounds of ``table`` (:data:`RECALL_READERS`, or a
    dealer of that table)."""
    return who.role in RECALL_READERS or (who.role == "dealer" and table in who.tables)


async def get_round(request: web.Request, who: Principal) -> web.Response:
    """One round of a table: 403 ``forbidden``, 404 ``unknown_table`` (neither tonight's
    nor one whose stream holds events), 400 ``bad_request`` (a round number that is not a
    whole number from 1), 404 ``unknown_round`` (a round the table has not opened), 503
    ``unavailable`` (a round no bounded search could place: docs/AUDIT.md "Game recall")."""
    runtime = request.app[RUNTIME]
    table = request.match_info["id"]
    if not may_recall(who, table):
        return forbidden("a round's recall is for auditors, ops, members in charge and its dealers")
    head = (await runtime.store.head(table_stream(table))).version
    if head == 0:
        return json_view(error_reply("unknown_table", "no such table"), status=404)
    number = parse_round_number(request.match_info["n"])
    if number is None:
        return json_view(
            error_reply("bad_request", "a round number is a whole number from 1"), status=400
        )
    try:
        span = await read_round(runtime.store, table, number, head)
    except RecallTooCostly as e:
        return json_view(error_reply("unavailable", str(e)), status=503)
    if span is None:
        return json_view(
            error_reply("unknown_round", f"round {number} of {table} was not played"), status=404
        )
    recalled = recall_round(table, number, span.events, span.opened)
    recalled["complete"] = not span.cut_short
    return json_view(recalled)
