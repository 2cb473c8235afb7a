"""``casino-night forms``: write the regulator's forms as CSV and PDF, from the org log.

It folds the organization's log into the projections the forms are built from (as
``replay`` does, saving no checkpoint), then writes each form instance asked for to
``--out DIR`` as ``<CODE>-<key>.csv`` and ``.pdf``; ``--list`` prints what is due instead
(JSON). Safe while a server runs on the same store: it only reads (docs/FORMS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from services.reports import catalog


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments."""
    parser.add_argument("--night", default="examples/night.toml")
    parser.add_argument("--data-dir", default=None)
    names = [e.form for e in catalog.CATALOG]
    parser.add_argument(
        "--form",
        default="all",
        help=f"which form: {', '.join(names)} or all (default)",
    )
    parser.add_argument(
        "--key",
        default=None,
        help="the instance (a license period 2026-11-01_2026-12-31, an occasion id...); "
        "default: every instance of the form",
    )
    parser.add_argument("--out", default=None, help="the directory to write the files to")
    parser.add_argument(
        "--list", action="store_true", help="print every form that is or will be due (JSON)"
    )


async def _inputs(args: argparse.Namespace) -> catalog.ReportInputs:
    """The projections the forms need, folded from the whole org log."""
    from projections.bankroll import Bankrolls
    from projections.bell_jars import BellJars
    from projections.cash_control import CashControl
    from projections.control_sheets import ControlSheets
    from projections.expenses import Expenses
    from projections.raffles import Raffles
    from projections.runner import ProjectionRunner
    from services.cli import offline_store
    from services.night import load_night

    night = load_night(Path(args.night))
    cash_control, expenses, sheets = CashControl(), Expenses(), ControlSheets()
    bankrolls = Bankrolls()
    raffles, bell_jars = Raffles(), BellJars(night.timezone)
    async with offline_store(args) as store:
        runner = ProjectionRunner(
            store, [cash_control, bankrolls, expenses, sheets, raffles, bell_jars], mac_key=None
        )
        await runner.catch_up()
    return catalog.ReportInputs(
        organization=night.organization_name,
        timezone=night.timezone,
        cash_control=cash_control,
        bankrolls=bankrolls,
        expenses=expenses,
        control_sheets=sheets,
        member_in_charge=night.member_in_charge,
        use_of_proceeds=night.use_of_proceeds,
        raffles=raffles,
        bell_jars=bell_jars,
    )


def run(args: argparse.Namespace) -> int:
    """List what is due, or write the forms asked for; exit 2 for an unknown form or key."""
    from services.cli import CliError
    from services.reports.due import local_date
    from services.reports.form import to_csv, to_pdf

    if args.form != "all":
        try:
            catalog.entry(args.form)
        except catalog.UnknownForm:
            names = ", ".join(e.form for e in catalog.CATALOG)
            raise CliError(f"no form {args.form!r}; forms: {names}, all") from None
    if args.key is not None and args.form == "all":
        raise CliError("--key goes with --form")
    if not args.list and args.out is None:
        raise CliError("say where to write the forms with --out DIR (or --list)")
    inputs = asyncio.run(_inputs(args))
    today = local_date(time.time_ns() // 1_000_000, inputs.timezone)
    due = [
        r
        for r in catalog.due_reports(inputs, today)
        if args.form in ("all", r.entry.form) and args.key in (None, r.instance.key)
    ]
    if args.key is not None and not due:
        raise CliError(f"{args.form} has no instance {args.key!r}")
    if args.list:
        print(
            json.dumps({"today": today.isoformat(), "reports": [r.view() for r in due]}, indent=2)
        )
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for r in due:
        form = catalog.build(inputs, r.entry.form, r.instance.key)
        stem = out / f"{form.code}-{r.instance.key}"
        Path(f"{stem}.csv").write_text(to_csv(form))
        Path(f"{stem}.pdf").write_bytes(to_pdf(form))
        flag = " (overdue)" if r.overdue else ""
        print(f"{stem}.csv, {stem}.pdf: due {form.due.isoformat()}{flag}", file=sys.stderr)
    return 0
