"""The README says which games a table may run: the list must be the server's own."""

from __future__ import annotations

import re
from pathlib import Path

from services.games.registry import GAMES


def test_the_readme_lists_every_game_with_rules(project_root: Path) -> None:
    readme = (project_root / "README.md").read_text()
    [row] = [line for line in readme.splitlines() if line.startswith("| `[[tables]] game` |")]
    listed = set(re.findall(r"`([a-z_]+)`", row.split("|")[3]))
    assert listed == set(GAMES)
