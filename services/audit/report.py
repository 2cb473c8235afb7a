"""The audit's report in readable form (Markdown) and its files (docs/AUDIT.md)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from services.audit.base import JSONValue
from services.audit.engine import AuditReport, Scope

JSON_FILE = "audit.json"
MARKDOWN_FILE = "audit.md"


def _utc(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def describe_scope(scope: Scope) -> str:
    """The scope in words: ``the whole log`` or ``occasion X, from … until …``."""
    if scope.whole:
        return "the whole log"
    parts = []
    if scope.occasion is not None:
        parts.append(f"occasion {scope.occasion}")
    if scope.since_ms is not None:
        parts.append(f"from {_utc(scope.since_ms)}")
    if scope.until_ms is not None:
        parts.append(f"until {_utc(scope.until_ms)}")
    return ", ".join(parts)


def _cell(value: JSONValue) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: AuditReport) -> str:
    """The report as ``audit.md`` holds it and the command prints it: what was read, each
    check with what it counted, and every discrepancy with its stream, seq and figures."""
    found = len(report.discrepancies)
    verdict = (
        "**clean**: every figure checked is what the rules and the chains give"
        if report.ok
        else f"**{found} discrepanc{'y' if found == 1 else 'ies'}**"
    )
    lines = [
        f"# Audit of {report.organization}",
        "",
        f"- Read: {report.events:,} events of the org log, up to entry {report.log_head}",
        f"- Reported: {describe_scope(report.scope)} ({report.events_in_scope:,} events)",
        f"- Signed checkpoints given: {report.checkpoints}",
        f"- Occasions the log started: {', '.join(report.occasions) or 'none'}",
        f"- Result: {verdict}",
        "",
        "## What was checked",
        "",
        "| check | checked | discrepancies |",
        "|---|---|---|",
    ]
    for c in report.checks:
        counts = ", ".join(f"{n:,} {kind}" for kind, n in sorted(c.checked.items())) or "-"
        lines.append(f"| {c.name} | {counts} | {c.discrepancies} |")
    banks = report.figures.get("banks")
    if banks:
        lines += [
            "",
            "## Bell jar banks",
            "",
            "Each receptacle's bank as the log gives it (cents; 4620.19(c)(15), (20)): its "
            "sales less the cash prizes paid for its deals. The log records no other figure "
            "of a bank to hold it to; each sale and redemption is checked at its event.",
            "",
            "| deal | deals | sales | cash prizes | bank |",
            "|---|---|---|---|---|",
        ]
        for row in banks:
            deals = row["deals"]
            lines.append(
                f"| {_cell(row['deal'])} | "
                f"{_cell(', '.join(map(str, deals)) if isinstance(deals, list) else deals)} | "
                f"{_cell(row['sales'])} | {_cell(row['cash_prizes'])} | {_cell(row['bank'])} |"
            )
    if report.discrepancies:
        lines += [
            "",
            "## Discrepancies",
            "",
            "| check | stream | seq | what | expected | found |",
            "|---|---|---|---|---|---|",
        ]
        for d in report.discrepancies:
            seq = "-" if d.seq is None else str(d.seq)
            lines.append(
                f"| {d.check} | {_cell(d.stream)} | {seq} | {_cell(d.what)} | "
                f"{_cell(d.expected)} | {_cell(d.found)} |"
            )
    return "\n".join(lines) + "\n"


def write(report: AuditReport, directory: Path) -> tuple[Path, Path]:
    """Write ``audit.json`` and ``audit.md`` into ``directory`` (made if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    as_json = directory / JSON_FILE
    as_markdown = directory / MARKDOWN_FILE
    as_json.write_text(json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    as_markdown.write_text(markdown(report))
    return as_json, as_markdown
