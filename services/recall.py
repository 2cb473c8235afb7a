"""Placeholder: being built in this session (issue 14)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--night", default="examples/night.toml")
    parser.add_argument("--data-dir", default=None)


def run(args: argparse.Namespace) -> int:
    from services.cli import CliError

    raise CliError("not built yet")
