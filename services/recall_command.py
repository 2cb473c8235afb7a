"""``casino-night recall --table T --round N [--json]``: one round of a table as it
happened, read as ``GET /api/tables/{id}/rounds/{n}`` reads it (services/recall.py), printed
readably or as JSON (docs/AUDIT.md, "Game recall")."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
from typing import Any

from services.aggregates import table_stream
from services.cli import CliError, offline_store
from services.recall import (
    MAX_ROUND_EVENTS,
    RecallTooCostly,
    parse_round_number,
    recall_from_store,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``casino-night recall --table T --round N [--json]``."""
    parser.add_argument("--table", required=True, help="the table's id")
    parser.add_argument("--round", required=True, help="the round number (from 1)")
    parser.add_argument("--json", action="store_true", help="print the recall as JSON")
    parser.add_argument("--night", default="examples/night.toml")
    parser.add_argument("--data-dir", default=None)


def _time(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}Z"


def _cents(value: int) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value) // 100:,}.{abs(value) % 100:02d}"


def render(recalled: dict[str, Any]) -> str:
    """The recall as text: the round's head, its bets with their settlement, what decided
    it, and every step with who and when."""
    out = [
        f"{recalled['table']} round {recalled['round']} ({recalled['game']}, "
        f"{recalled['outcome_mode']} mode): {recalled['status']}"
    ]
    if recalled["voided"] is not None:
        v = recalled["voided"]
        out.append(f"  voided by {v['actor']} at {_time(v['ts'])}: {v['reason']}")
    settlement = recalled["settlement"]
    out.append(
        f"  wagered {_cents(settlement['wagered'])}, paid {_cents(settlement['paid'])}, "
        f"house {_cents(settlement['wagered'] - settlement['paid'])}"
    )
    out.append("bets:")
    for bet in recalled["bets"]:
        lines = bet["settlement"]
        result = ", ".join(f"{s['result']} {_cents(s['paid'])}" for s in lines) or "unsettled"
        if bet["cancelled"] is not None:
            result = f"cancelled by {bet['cancelled']['actor']}"
        out.append(
            f"  {bet['bet_id']}  {bet['player']}  {json.dumps(bet['bet'], sort_keys=True)}  "
            f"{_cents(bet['amount'])}  by {bet['placed']['actor']}: {result}"
        )
        for wager in bet["wagers"]:
            out.append(f"      + {wager['kind']} {_cents(wager['amount'])} ({wager['wager_id']})")
    out.append("outcome:")
    for o in recalled["outcomes"]:
        out.append(
            f"  seq {o['seq']}  {json.dumps(o['outcome'], sort_keys=True)}  source {o['source']}"
        )
    out.append("steps:")
    for s in recalled["steps"]:
        after = "  (after the round)" if s["after_end"] else ""
        out.append(f"  {s['seq']:>7}  {_time(s['ts'])}  {s['actor']:<24} {s['type']}{after}")
    if not recalled.get("complete", True):
        out.append(f"(cut short at {MAX_ROUND_EVENTS} events)")
    return "\n".join(out)


async def _recall(args: argparse.Namespace, number: int) -> int:
    async with offline_store(args) as store:
        if (await store.head(table_stream(args.table))).version == 0:
            raise CliError(f"unknown table {args.table!r}: its stream holds no event")
        try:
            recalled = await recall_from_store(store, args.table, number)
        except RecallTooCostly as e:
            raise CliError(f"{e}: the table's round index does not place it") from None
    if recalled is None:
        raise CliError(f"round {number} of {args.table} was not played")
    print(json.dumps(recalled, indent=2) if args.json else render(recalled))
    return 0


def run(args: argparse.Namespace) -> int:
    """Print one round of a table as it happened; status 2 for an unknown table, a round
    not played or a malformed round number."""
    number = parse_round_number(args.round)
    if number is None:
        raise CliError(f"--round {args.round!r}: a round number is a whole number from 1")
    status = asyncio.run(_recall(args, number))
    sys.stdout.flush()
    return status
