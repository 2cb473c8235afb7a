"""Cheaper construction of frozen, slotted dataclasses (events, envelopes, table states).

A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__``
(to get past its frozen ``__setattr__``), and ``dataclasses.replace`` collects every field
into keyword arguments before calling it. The actor builds several such records per bet,
so the functions here are generated once per class, as dataclasses generate theirs, and
set the slots through their descriptors directly. They build exactly what the dataclass
would: same fields, same defaults, the same ``__post_init__`` call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


def _slots(cls: type[Any]) -> dict[str, Any]:
    """Each field's slot setter, by name; the class must be a slotted dataclass."""
    setters: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        slot = None
        for klass in cls.__mro__:
            slot = klass.__dict__.get(f.name)
            if slot is not None:
                break
        if slot is None or not hasattr(slot, "__set__"):
            raise TypeError(f"{cls.__name__}.{f.name} is not a slot")
        setters[f.name] = slot.__set__
    return setters


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass an ``__init__`` that sets its slots directly.

    The signature is the dataclass's own (keyword-only or not, with the same defaults);
    a field with a ``default_factory`` gets a fresh value each time, a field not in the
    ``__init__`` its default, and ``__post_init__`` is called when the class has one. A
    class that is not a slotted dataclass is refused (``TypeError``)."""
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__):
        raise TypeError(f"{cls.__name__} has init-only variables: keep its own __init__")
    setters = _slots(cls)
    namespace: dict[str, Any] = {"MISSING": dataclasses.MISSING}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        namespace[f"set_{f.name}"] = setters[f.name]
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            namespace[f"factory_{f.name}"] = f.default_factory
        if f.default is not dataclasses.MISSING:
            namespace[f"default_{f.name}"] = f.default
        if not f.init:
            if has_factory:
                body.append(f"    set_{f.name}(self, factory_{f.name}())")
            elif f.default is not dataclasses.MISSING:
                body.append(f"    set_{f.name}(self, default_{f.name})")
            continue
        params = keyword if f.kw_only else positional
        if has_factory:
            params.append(f"{f.name}=MISSING")
            body.append(
                f"    set_{f.name}(self, factory_{f.name}() if {f.name} is MISSING else {f.name})"
            )
            continue
        if f.default is not dataclasses.MISSING:
            params.append(f"{f.name}=default_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    set_{f.name}(self, {f.name})")
    post_init = getattr(cls, "__post_init__", None)
    if post_init is not None:
        body.append("    self.__post_init__()")
    if not body:
        body.append("    pass")
    params = ["self", *positional, *(["*", *keyword] if keyword else [])]
    source = f"def __init__({', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # generated once per class, as dataclasses generate theirs
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def replacer(cls: type[T], *names: str) -> Callable[..., T]:
    """A function ``(record, value, ...)`` that returns a copy of a ``cls`` record with the
    fields ``names`` set to the values given, in that order, and every other field as in
    ``record``: ``dataclasses.replace(record, name=value, ...)`` for one fixed set of
    fields, without collecting keyword arguments or running ``__init__``. Only for a class
    with no ``__post_init__`` (nothing would check the new values)."""
    if getattr(cls, "__post_init__", None) is not None:
        raise TypeError(f"{cls.__name__} has a __post_init__: use dataclasses.replace")
    setters = _slots(cls)
    unknown = [n for n in names if n not in setters]
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = [f"def replace(record, {', '.join(names)}):", "    copy = new(cls)"]
    for name, setter in setters.items():
        namespace[f"set_{name}"] = setter
        value = name if name in names else f"record.{name}"
        lines.append(f"    set_{name}(copy, {value})")
    lines.append("    return copy")
    exec("\n".join(lines) + "\n", namespace)
    replace: Callable[..., T] = namespace["replace"]
    return replace


def assembler(cls: type[T]) -> Callable[..., T]:
    """A function taking every field of ``cls`` positionally, in declaration order, that
    builds a record by setting its slots (no defaults, no ``__post_init__``): for readers
    and writers that have every value at hand, such as the store's codec."""
    setters = _slots(cls)
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = [f"def assemble({', '.join(setters)}):", "    record = new(cls)"]
    for name, setter in setters.items():
        namespace[f"set_{name}"] = setter
        lines.append(f"    set_{name}(record, {name})")
    lines.append("    return record")
    exec("\n".join(lines) + "\n", namespace)
    assemble: Callable[..., T] = namespace["assemble"]
    return assemble


_REPLACERS: dict[tuple[type[Any], tuple[str, ...]], Callable[..., Any]] = {}


def replace(record: T, /, **changes: Any) -> T:
    """``dataclasses.replace(record, **changes)``, several times faster for the frozen,
    slotted records the pure rules fold (a table's state, a Black Jack round, its hands):
    the copy is made by a :func:`replacer` generated once for each class and set of fields
    changed, so no keyword arguments are collected and no ``__init__`` runs. A record with a
    ``__post_init__`` (whose checks must see the new values) or without slots goes through
    ``dataclasses.replace`` itself. The same result either way."""
    names = tuple(changes)
    key = (record.__class__, names)
    copy = _REPLACERS.get(key)
    if copy is None:
        copy = _REPLACERS[key] = _copier(record.__class__, names)
    return cast(T, copy(record, *changes.values()))


def _copier(cls: type[Any], names: tuple[str, ...]) -> Callable[..., Any]:
    if (
        not dataclasses.is_dataclass(cls)
        or "__slots__" not in cls.__dict__
        or getattr(cls, "__post_init__", None) is not None
        or any(not f.init for f in dataclasses.fields(cls))
    ):

        def through_init(record: Any, *values: Any) -> Any:
            return dataclasses.replace(record, **dict(zip(names, values, strict=True)))

        return through_init
    return replacer(cls, *names)
