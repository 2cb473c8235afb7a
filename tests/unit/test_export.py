"""read_export (services/export.py) refuses a file that is not an export of its version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.export import FORMAT, VERSION, ExportError, read_export


def test_a_file_that_is_not_an_export_of_this_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    for text, said in [
        ("not json\n", "is not a casino-night export"),
        (json.dumps({"kind": "header", "format": "other"}) + "\n", "is not a casino-night export"),
        (
            json.dumps({"kind": "header", "format": FORMAT, "version": VERSION + 1}) + "\n",
            "is version 2",
        ),
        (
            json.dumps({"kind": "header", "format": FORMAT, "version": VERSION}) + "\n",
            "holds no public key",
        ),
    ]:
        path.write_text(text)
        with pytest.raises(ExportError, match=said):
            read_export(path)
