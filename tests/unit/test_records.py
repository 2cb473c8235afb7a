"""The generated constructors of events/records.py build exactly what the dataclass would."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from events.records import assembler, fast_init, replacer


def _plain_class() -> type:
    """A fresh class each call: one keeps the dataclass's __init__, one gets fast_init's."""

    @dataclass(frozen=True, slots=True, kw_only=True)
    class Plain:
        a: int
        b: str = "b"
        c: tuple[int, ...] = ()
        d: list[int] = field(default_factory=list)
        e: int = field(default=5, init=False)

    return Plain


def _mixed_class() -> type:
    @dataclass(frozen=True, slots=True)
    class Mixed:
        a: int
        b: int = 2
        _: dataclasses.KW_ONLY
        c: int
        d: int = 4

    return Mixed


def _checked_class() -> type:
    @dataclass(frozen=True, slots=True, kw_only=True)
    class Checked:
        n: int
        doubled: int = field(init=False)

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")
            object.__setattr__(self, "doubled", 2 * self.n)

    return Checked


def _as_tuple(record: Any) -> tuple[object, ...]:
    return tuple(getattr(record, f.name) for f in dataclasses.fields(record))


def test_fast_init_takes_the_same_arguments_and_defaults() -> None:
    reference, fast = _plain_class(), fast_init(_plain_class())
    assert _as_tuple(fast(a=1)) == _as_tuple(reference(a=1)) == (1, "b", (), [], 5)
    assert _as_tuple(fast(a=1, b="x", c=(1,), d=[2])) == (1, "x", (1,), [2], 5)
    first, second = fast(a=1), fast(a=1)
    assert first.d is not second.d  # a default factory runs for each record
    with pytest.raises(TypeError):
        fast(1)  # keyword-only stays keyword-only
    with pytest.raises(TypeError):
        fast(a=1, e=3)  # a field outside __init__ stays outside
    with pytest.raises(TypeError):
        fast()  # a field without a default is required
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast(a=1).a = 2


def test_fast_init_keeps_positional_fields_before_keyword_only_ones() -> None:
    reference, fast = _mixed_class(), fast_init(_mixed_class())
    assert _as_tuple(fast(1, c=3)) == _as_tuple(reference(1, c=3)) == (1, 2, 3, 4)
    assert _as_tuple(fast(1, 5, c=3, d=6)) == (1, 5, 3, 6)
    with pytest.raises(TypeError):
        fast(1, 2, 3)


def test_fast_init_calls_post_init() -> None:
    fast = fast_init(_checked_class())
    assert fast(n=4).doubled == 8
    with pytest.raises(ValueError, match="negative"):
        fast(n=-1)


def test_fast_init_refuses_what_is_not_a_slotted_dataclass() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises(TypeError):
        fast_init(NoSlots)

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        seed: dataclasses.InitVar[int]

        def __post_init__(self, seed: int) -> None:
            pass

    with pytest.raises(TypeError):
        fast_init(WithInitVar)


def test_replacer_is_replace_for_its_fields() -> None:
    cls = _plain_class()
    record = cls(a=1, b="x", c=(2,), d=[3])
    change = replacer(cls, "a", "c")
    copy = change(record, 7, (8,))
    assert copy == dataclasses.replace(record, a=7, c=(8,))
    assert copy.d is record.d and copy.e == 5 and copy.b == "x"
    assert record.a == 1  # the original is untouched
    with pytest.raises(TypeError):
        replacer(cls, "nope")
    with pytest.raises(TypeError):
        replacer(_checked_class(), "n")  # nothing would run its check


def test_assembler_sets_every_field_in_order() -> None:
    build = assembler(_plain_class())
    assert _as_tuple(build(1, "b", (), [], 9)) == (1, "b", (), [], 9)
    with pytest.raises(TypeError):
        build(1, "b")
