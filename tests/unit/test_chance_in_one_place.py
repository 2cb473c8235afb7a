"""Randomness enters in one place, the actors' rules adapters (docs/ARCHITECTURE.md
"Chance"): nothing in the gateway or the supervisor draws, deals or reaches the Chance's
generator. A structural check of their source (every module of services/gateway/ and
services/supervisor.py), not a text search: imports, names and attribute uses.

Token ids and a new server secret (``secrets.token_*`` in services/gateway/auth.py) are
credentials, not chance, and are the one use of ``secrets`` allowed there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [
    *sorted((ROOT / "services" / "gateway").glob("*.py")),
    ROOT / "services" / "supervisor.py",
]

DRAWING_NAMES = frozenset(
    {
        "random", "SystemRandom", "Random", "randrange", "randint", "randbytes", "getrandbits",
        "shuffle", "urandom", "token_bytes",
        "rng", "below", "salt", "ensure_board", "deal", "deal_board", "seal_board",
    }
)  # fmt: skip
"""Names whose use means a draw (or a board dealt) in the module."""
CREDENTIALS = frozenset({"token_hex", "token_urlsafe"})
"""``secrets`` functions allowed: ids and secrets for tokens, not chance."""


def findings(source: str) -> list[str]:
    """What in ``source`` draws or reaches a generator: one line per use."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if a.name == "random"]
        elif isinstance(node, ast.ImportFrom) and node.module in ("random", "secrets"):
            found += [
                f"{where}: from {node.module} import {a.name}"
                for a in node.names
                if node.module == "random" or a.name not in CREDENTIALS
            ]
        elif isinstance(node, ast.Name) and node.id in DRAWING_NAMES:
            found.append(f"{where}: {node.id}")
        elif isinstance(node, ast.Attribute):
            if node.attr in DRAWING_NAMES:
                found.append(f"{where}: .{node.attr}")
            elif (
                isinstance(node.value, ast.Name)
                and node.value.id == "secrets"
                and node.attr not in CREDENTIALS
            ):
                found.append(f"{where}: secrets.{node.attr}")
            elif isinstance(node.value, ast.Attribute) and node.value.attr == "chance":
                found.append(f"{where}: chance.{node.attr}")
    return found


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_gateway_and_the_supervisor_draw_nothing(path: Path) -> None:
    assert findings(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    [
        # what the gateway and the supervisor did before the adapter dealt the board
        "async def f(runtime):\n    await board.ensure_board(r, k, o, raffle, runtime.rng)\n",
        "async def f(self):\n    await ensure_board(self.store.redis, k, o, i, self.chance.rng)\n",
        "def f(self):\n    return self.chance.below(37)\n",
        "import random\n",
        "from random import shuffle\n",
        "import secrets\nx = secrets.SystemRandom()\n",
        "import secrets\nx = secrets.randbelow(54)\n",
        "import os\nx = os.urandom(16)\n",
    ],
)
def test_the_check_finds_a_draw(source: str) -> None:
    assert findings(source)


def test_the_check_allows_token_credentials() -> None:
    assert findings("import secrets\njti = secrets.token_hex(16)\n") == []
