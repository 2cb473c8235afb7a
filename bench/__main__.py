"""``python -m bench [--quick] [--only NAME[,NAME]]``: run the benchmarks, print one table.

Names: store, e2e, settle, wheel_settle, dice_settle, rebuild, control_sheets, bell_jars,
fanout, fairness, soak, black_jack, scaling, dashboard, audit, export.
Progress goes to stderr; the table (and the notes saying how each figure was measured) to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from bench import (
    audit,
    bell_jars,
    black_jack,
    control_sheets,
    dashboard,
    dice,
    e2e,
    export,
    fanout,
    hostile,
    rebuild,
    scaling,
    settle,
    store,
    wheels,
)
from bench.common import Result, progress
from services import logging as app_logging

BENCHMARKS: dict[str, Callable[[bool], Any]] = {
    "store": store.run,
    "e2e": e2e.run,
    "settle": settle.run,
    "wheel_settle": wheels.run,
    "dice_settle": dice.run,
    "rebuild": rebuild.run,
    "control_sheets": control_sheets.run,
    "bell_jars": bell_jars.run,
    "fanout": fanout.run,
    "fairness": hostile.fairness,
    "soak": hostile.soak,
    "black_jack": black_jack.run,
    "scaling": scaling.run,
    "dashboard": dashboard.run,
    "audit": audit.run,
    "export": export.run,
}


def table(results: list[Result]) -> str:
    head = ("figure", "measured", "unit", "target", "met")
    rows = [
        (
            r.figure,
            r.shown(),
            r.unit,
            r.target,
            "-" if r.target == "-" else ("yes" if r.met else "no"),
        )
        for r in results
    ]
    widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            out.append(cell.rjust(w) if i == 1 else cell.ljust(w))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    lines = [line(head), sep, *(line(r) for r in rows)]
    notes = [f"  {r.figure.split()[0]}: {r.note}" for r in results if r.note]
    if notes:
        lines += ["", "How each figure was measured:", *notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs, smaller data")
    parser.add_argument(
        "--only", action="append", default=[], help=f"run only these: {', '.join(BENCHMARKS)}"
    )
    args = parser.parse_args(argv)
    names = [n for arg in args.only for n in arg.split(",") if n] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    app_logging.configure("console", logging.WARNING)

    import uvloop

    results: list[Result] = []
    failed = False
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        for name in names:
            fn = BENCHMARKS[name]
            t0 = time.perf_counter()
            try:
                got = (
                    runner.run(fn(args.quick))
                    if inspect.iscoroutinefunction(fn)
                    else fn(args.quick)
                )
                results += got
            except Exception:
                failed = True
                traceback.print_exc()
                results.append(Result(f"{name} (failed, see stderr)", None, "-"))
            progress(f"{name} took {time.perf_counter() - t0:.1f} s")
    progress(f"all benchmarks took {time.perf_counter() - started:.1f} s")
    print(table(results))
    print(
        f"\nMachine: {os.cpu_count()} cores shared by the server, Redis and this client; load"
        f" average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after;"
        f" {'--quick, ' if args.quick else ''}{time.perf_counter() - started:.0f} s in all."
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
