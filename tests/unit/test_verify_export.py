"""tools/verify_export.py's own msgpack encoder writes the bytes msgpack-python writes, so
the standalone verifier recomputes every hash exactly as events/envelope.py does."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import msgpack

from events.envelope import canonical, chain_hash

TOOL = Path(__file__).resolve().parents[2] / "tools" / "verify_export.py"
BOUNDARIES = [
    0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53 - 1, 2**64 - 1,
    -1, -31, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
]  # fmt: skip


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_export", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def value(rng: random.Random, depth: int = 0) -> Any:
    """A random value of what event data holds, long strings and big containers included."""
    choice = rng.randrange(9 if depth < 2 else 5)
    if choice == 0:
        n = rng.choice(BOUNDARIES) + rng.choice((0, 1, -1))
        return n if -(2**63) <= n < 2**64 else 0
    if choice == 1:
        return "".join(rng.choice("aé€🂡 ") for _ in range(rng.choice((0, 5, 31, 32, 255, 300))))
    if choice == 2:
        return rng.choice((None, True, False))
    if choice == 3:
        return rng.randint(-(2**40), 2**40)
    if choice == 4:
        return rng.random() * 1000
    size = rng.choice((0, 3, 15, 16, 70) if depth == 0 else (0, 2, 15, 16))
    if choice in (5, 6):
        return [value(rng, depth + 1) for _ in range(size)]
    return {f"k{rng.randrange(10_000)}": value(rng, depth + 1) for _ in range(size)}


def test_the_encoder_matches_msgpack_on_every_width_and_the_hash_matches_the_servers() -> None:
    verify_export = tool()
    packer = msgpack.Packer(use_bin_type=True)
    rng = random.Random(14)
    for n in BOUNDARIES:
        out = bytearray()
        verify_export.pack(n, out)
        assert bytes(out) == packer.pack(n), n
    for _ in range(300):
        data = value(rng)
        out = bytearray()
        verify_export.pack(data, out)
        assert bytes(out) == packer.pack(canonical(data))
        event = {
            "id": "e1", "type": "T", "version": 1, "stream": "s", "seq": rng.randint(1, 2**40),
            "ts": rng.randint(0, 2**45), "actor": "a", "causation": "c",
            "correlation": rng.choice((None, "r")), "prev_hash": "0" * 64,
            "data": {"x": data, "b": [data]},
        }  # fmt: skip
        assert verify_export.event_hash(event) == chain_hash(**event)
        assert verify_export.canonical(event["data"]) == canonical(event["data"])
