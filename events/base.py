"""The event vocabulary's foundation: the ``Event`` base and the registry of names and versions.

Every event is a frozen, slotted, keyword-only dataclass with a stable ``NAME`` and
``VERSION``. Bodies convert to plain data (dicts, lists, str, int, bool, None) for the
codec and back; an older version is upcast on read, never rewritten in the store.
"""

from __future__ import annotations

import dataclasses
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, Union

from events.records import fast_init

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
    """Register an event class under a stable ``name`` and schema ``version`` (a slotted
    dataclass gets the cheaper ``__init__`` of :func:`events.records.fast_init`)."""

    def register(cls: E) -> E:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"event name {name!r} registered twice")
        cls.NAME = name
        cls.VERSION = version
        if dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__:
            fast_init(cls)  # the actor builds several events per command
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
_PRIMITIVE_TYPES = frozenset(_PRIMITIVE)
_SORTED_FIELDS: dict[type[Any], tuple[tuple[str, int], ...]] = {}
_ENCODERS: dict[type[Any], Callable[[Any], Data]] = {}
"""Per record type (an event body, a named tuple, a nested dataclass): the function that
turns one into plain data, built once from its fields and their annotations."""


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
    this order (msgpack preserves it), so the hash over the stored data is reproducible.

    A record type is converted by its own encoder (:func:`record_encoder`), built once;
    anything else is walked value by value."""
    cls = value.__class__
    if cls in _PRIMITIVE_TYPES:
        return value
    encode = _ENCODERS.get(cls)
    if encode is not None:
        return encode(value)
    if isinstance(value, _PRIMITIVE):
        return value
    if (isinstance(value, tuple) and hasattr(value, "_fields")) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        return record_encoder(cls)(value)
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_data(value[k]) for k in sorted(value)}
    return value


def _plain(value: Any) -> Any:
    """:func:`to_data` of a value typed loosely (``Mapping[str, Any]``, ``Any``): the JSON
    shapes (dicts, lists, scalars) without a lookup per value; anything else as to_data."""
    cls = value.__class__
    if cls in _PRIMITIVE_TYPES:
        return value
    scalar = _PRIMITIVE_TYPES
    if cls is dict:
        out = {}
        for k in sorted(value):
            v = value[k]
            out[k] = v if v.__class__ in scalar else _plain(v)
        return out
    if cls is list or cls is tuple:
        return [v if v.__class__ in scalar else _plain(v) for v in value]
    return to_data(value)


def record_encoder(cls: type[Any]) -> Callable[[Any], Data]:
    """The function that turns a record of type ``cls`` (a dataclass or a named tuple) into
    plain data exactly as :func:`to_data` defines it: a dict of its fields in sorted order,
    each converted as its annotation says (a scalar as it is, a tuple as a list, a named
    tuple inline as a dict, a nested dataclass by its own encoder, anything typed loosely
    walked by value). Generated once per type from its fields: no reflection per event."""
    cached = _ENCODERS.get(cls)
    if cached is not None:
        return cached
    namespace: dict[str, Any] = {"plain": _plain, "to_data": to_data}
    source = f"def encode(o):\n    return {_record_expression(cls, 'o', namespace, 0)}\n"
    exec(source, namespace)  # one function per record type, as dataclasses build theirs
    encode: Callable[[Any], Data] = namespace["encode"]
    _ENCODERS[cls] = encode
    return encode


def _hints(cls: type[Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be resolved: its fields walked by value
        return {}


def _record_expression(cls: type[Any], value: str, namespace: dict[str, Any], depth: int) -> str:
    """Python source of a dict display that converts the record ``value`` (a name)."""
    hints = _hints(cls)
    named = not dataclasses.is_dataclass(cls)
    items = []
    for name, index in _sorted_fields(cls):
        get = f"{value}[{index}]" if named else f"{value}.{name}"
        items.append(f"{name!r}: {_expression(hints.get(name, Any), get, namespace, depth)}")
    return "{" + ", ".join(items) + "}"


def _is_scalar(tp: Any) -> bool:
    """An annotation whose values are plain data as they are: a scalar type, a literal of
    scalars, or a union of those."""
    if tp in _PRIMITIVE_TYPES:
        return True
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return all(type(a) in _PRIMITIVE_TYPES for a in args)
    if origin in (Union, types.UnionType):
        return all(_is_scalar(a) for a in args)
    return False


def _expression(tp: Any, value: str, namespace: dict[str, Any], depth: int) -> str:
    """Python source converting ``value`` (an expression without side effects, cheap to
    evaluate again) of a field annotated ``tp`` to plain data, as :func:`to_data` would."""
    if _is_scalar(tp):
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            converted = _expression(inner[0], value, namespace, depth)
            return f"(None if {value} is None else {converted})"
        return f"plain({value})"
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if _is_scalar(args[0]):
            return f"list({value})"
        item = f"x{depth}"
        return f"[{_expression(args[0], item, namespace, depth + 1)} for {item} in {value}]"
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
        # A named tuple cannot be subclassed with other fields: its fields, inline.
        if depth > 8:
            return f"to_data({value})"
        return _record_expression(tp, value, namespace, depth + 1)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"to_data({value})"  # a subclass would add fields: encoded by its own type
    return f"plain({value})"


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
        field_names = tuple(named._fields)
        if len(field_names) < 2:
            return lambda data: named(**data)
        # A settlement line is decoded per bet: its values are taken by one itemgetter
        # when the data holds exactly its fields, else through the keyword arguments
        # (which raise on a missing or an unknown field, or fill a default).
        values_of = operator.itemgetter(*field_names)
        count = len(field_names)
        new = tuple.__new__

        def decode_named(data: Any) -> Any:
            if data.__class__ is dict and len(data) == count:
                try:
                    return new(named, values_of(data))
                except KeyError:
                    pass
            return named(**data)

        return decode_named
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(tp) if f.init]
        cls = tp

        def decode_dataclass(data: Any) -> Any:
            return cls(**{name: conv(data[name]) for name, conv in fields if name in data})

        names = frozenset(name for name, _conv in fields)
        converted = [(name, conv) for name, conv in fields if conv is not _identity]
        if converted:

            def decode_converting(data: Any) -> Any:
                # Every field as stored: a copy of the data, only the fields of a record
                # type (settlement lines, hands) converted.
                if data.keys() != names:
                    return decode_dataclass(data)
                kwargs = dict(data)
                for name, conv in converted:
                    kwargs[name] = conv(kwargs[name])
                return cls(**kwargs)

            return decode_converting

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
        return lambda data: tuple(map(item, data))
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            conv = _decoder(inner[0])
            if conv is _identity:
                return _identity
            return lambda data: None if data is None else conv(data)
    return _identity
