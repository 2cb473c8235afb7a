"""Figures of this checkout against another revision, measured in the same run.

``python -m bench.compare --before REV [--only NAMES] [--runs N] [--quick]`` checks REV
out into a temporary git worktree, then runs ``python -m bench --only NAMES`` there and
here in turn, N times each (before, now, before, now, …, so both share the machine's load),
and prints for every figure the median of each version, their ratio and the spread (lowest
and highest) over the runs. ``make bench-compare BEFORE=REV`` runs it. Both versions use
this checkout's virtual environment.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (?P<figure>.+?) +\| +(?P<value>[-0-9.,]+) \| (?P<unit>.+?) +\|")


def figures(output: str) -> dict[str, tuple[float, str]]:
    """The figures of one ``python -m bench`` table (figure -> (value, unit))."""
    found: dict[str, tuple[float, str]] = {}
    for line in output.splitlines():
        m = ROW.match(line)
        if m is None or m["figure"] == "figure":
            continue
        try:
            found[m["figure"]] = (float(m["value"].replace(",", "")), m["unit"].strip())
        except ValueError:
            continue
    return found


def run_bench(tree: Path, only: str, quick: bool) -> dict[str, tuple[float, str]]:
    args = [sys.executable, "-m", "bench", "--only", only, *(["--quick"] if quick else [])]
    done = subprocess.run(args, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
    return figures(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("--before", required=True, help="the revision to compare with")
    parser.add_argument("--only", default="e2e,settle,wheel_settle")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cn-bench-before-") as tmp:
        before = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(before), args.before],
            cwd=ROOT,
            check=True,
        )
        try:
            runs: dict[str, defaultdict[str, list[float]]] = {
                "before": defaultdict(list),
                "now": defaultdict(list),
            }
            units: dict[str, str] = {}
            for i in range(args.runs):
                for label, tree in (("before", before), ("now", ROOT)):
                    print(f"run {i + 1}/{args.runs}: {label}", file=sys.stderr, flush=True)
                    for figure, (value, unit) in run_bench(tree, args.only, args.quick).items():
                        runs[label][figure].append(value)
                        units[figure] = unit
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(before)], cwd=ROOT, check=False
            )
    print(
        f"| figure | unit | before ({args.before}) | now | now/before "
        "| spread before | spread now |"
    )
    print("|---|---|---:|---:|---:|---|---|")
    for figure in sorted(set(runs["before"]) | set(runs["now"])):
        b, n = runs["before"].get(figure, []), runs["now"].get(figure, [])
        mb = statistics.median(b) if b else None
        mn = statistics.median(n) if n else None
        ratio = f"{mn / mb:.2f}" if mb and mn is not None else "-"
        print(
            f"| {figure} | {units.get(figure, '')} | {_show(mb)} | {_show(mn)} | {ratio} | "
            f"{_spread(b)} | {_spread(n)} |"
        )
    print(f"\n{args.runs} runs of each, interleaved; medians, and the lowest-highest of each.")
    return 0


def _show(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4g}"


def _spread(values: list[float]) -> str:
    return f"{min(values):,.4g}-{max(values):,.4g}" if values else "-"


if __name__ == "__main__":
    raise SystemExit(main())
