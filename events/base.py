"""The event vocabulary's foundation: the ``Event`` base and the registry of names and versions.

Every event is a frozen, slotted, keyword-only dataclass with a stable ``NAME`` and
``VERSION``. Bodies convert to plain data (dicts, lists, str, int, bool, None) for the
codec and back; an older version is upcast on read, never rewritten in the store.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, Union

Data = dict[str, Any]
Upcaster = Callable[[Data], Data]


class Event:
    """Base of every event body. Subclasses are registered with :func:`event`."""

    __slots__ = ()
    NAME: ClassVar[str]
    VERSION: ClassVar[int]


E = TypeVar("E", bound=type[Event])


class UnknownEvent(KeyError):
    """An event type the registry does not know (a newer writer, or a corrupted log)."""


_REGISTRY: dict[str, type[Event]] = {}
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}
_DECODERS: dict[type[Any], Callable[[Any], Any]] = {}


def event(name: str, version: int = 1) -> Callable[[E], E]:
    """Register an event class under a stable ``name`` and schema ``version``."""

    def register(cls: E) -> E:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"event name {name!r} registered twice")
        cls.NAME = name
        cls.VERSION = version
        _REGISTRY[name] = cls
        return cls

    return register


def upcaster(name: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register a function that turns ``name`` data of ``from_version`` into the next version."""

    def register(fn: Upcaster) -> Upcaster:
        _UPCASTERS[(name, from_version)] = fn
        return fn

    return register


def event_class(name: str) -> type[Event]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownEvent(name) from None


def current_version(name: str) -> int | None:
    """The version the registry reads ``name`` at (None for a type it does not know)."""
    cls = _REGISTRY.get(name)
    return None if cls is None else cls.VERSION


def registered() -> Mapping[str, type[Event]]:
    return dict(_REGISTRY)


_PRIMITIVE = (str, int, bool, float, type(None), bytes)
_SORTED_FIELDS: dict[type[Any], tuple[tuple[str, int], ...]] = {}


def _sorted_fields(cls: type[Any]) -> tuple[tuple[str, int], ...]:
    """A record type's field names in sorted order, with each one's position."""
    cached = _SORTED_FIELDS.get(cls)
    if cached is None:
        if dataclasses.is_dataclass(cls):
            names = [f.name for f in dataclasses.fields(cls)]
        else:
            names = list(cls._fields)
        cached = tuple(sorted((n, i) for i, n in enumerate(names)))
        _SORTED_FIELDS[cls] = cached
    return cached


def to_data(value: Any) -> Any:
    """Plain data for a body, in canonical form: records (dataclasses, named tuples) and
    mappings become dicts with their keys sorted, tuples become lists. Stored events keep
    this order (msgpack preserves it), so the hash over the stored data is reproducible."""
    if isinstance(value, _PRIMITIVE):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_data(value[i]) for name, i in _sorted_fields(type(value))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_data(getattr(value, name)) for name, _i in _sorted_fields(type(value))}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_data(value[k]) for k in sorted(value)}
    return value


def upcast(name: str, version: int, data: Data) -> Data:
    """Bring ``data`` written at ``version`` up to the registered class's version."""
    target = event_class(name).VERSION
    while version < target:
        data = _UPCASTERS[(name, version)](data)
        version += 1
    return data


def from_data(name: str, version: int, data: Data) -> Event:
    """Rebuild the event body named ``name`` from plain data, upcasting old versions."""
    cls = event_class(name)
    if version != cls.VERSION:
        data = upcast(name, version, data)
    result: Event = _decoder(cls)(data)
    return result


def _decoder(tp: Any) -> Callable[[Any], Any]:
    cached = _DECODERS.get(tp)
    if cached is None:
        cached = _build_decoder(tp)
        _DECODERS[tp] = cached
    return cached


def _identity(value: Any) -> Any:
    return value


def _build_decoder(tp: Any) -> Callable[[Any], Any]:
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
        named = tp
        return lambda data: named(**data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(tp) if f.init]
        cls = tp

        def decode_dataclass(data: Any) -> Any:
            return cls(**{name: conv(data[name]) for name, conv in fields if name in data})

        if any(conv is not _identity for _name, conv in fields):
            return decode_dataclass
        names = frozenset(name for name, _conv in fields)

        def decode_plain(data: Any) -> Any:
            # Every field as stored: the data is the keyword arguments when its keys are
            # exactly the fields (as to_data writes them), which skips a copy per event.
            if data.keys() == names:
                return cls(**data)
            return decode_dataclass(data)

        return decode_plain
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        if item is _identity:
            return tuple
        return lambda data: tuple(item(v) for v in data)
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            conv = _decoder(inner[0])
            if conv is _identity:
                return _identity
            return lambda data: None if data is None else conv(data)
    return _identity
