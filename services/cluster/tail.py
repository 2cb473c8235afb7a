"""What the org log's tail needs of an entry before deciding to decode it into an
envelope."""

from __future__ import annotations

from typing import Any

import msgpack
import msgspec

_STREAM, _SEQ = 3, 4
"""Positions of the stream and seq in the stored array (``events/codec.py``'s layout)."""


class _Placed(msgspec.Struct, array_like=True, gc=False):
    """The head of the stored array as far as the stream and seq (the items after them are
    skipped unread; the id, type and version are left undecoded)."""

    id: msgspec.Raw
    type: msgspec.Raw
    version: msgspec.Raw
    stream: str
    seq: int


_decode_placed = msgspec.msgpack.Decoder(_Placed).decode


def stream_and_seq(raw: bytes) -> tuple[str, int]:
    """The stream and seq of a stored envelope. Read by a typed decoder of the array's
    first five items (measured: a third of the time of unpacking the whole array, which
    builds the event's data; a streaming unpacker costs more than either); an entry of
    another shape is unpacked whole, as before."""
    try:
        placed = _decode_placed(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        fields: list[Any] = msgpack.unpackb(raw, raw=False)
        return fields[_STREAM], fields[_SEQ]
    return placed.stream, placed.seq


class InOrder:
    """A stream's events put back in seq order for one subscriber.

    A stream's events reach a process from its actor (when the stream's actor runs there)
    and from the org log's tail; an actor that took the stream moments ago publishes its
    first events while the tail may still bring the earlier ones. Every event comes one
    way or the other, so an event that comes before the one due next waits here until the
    gap closes; one already passed is dropped."""

    __slots__ = ("ahead", "position")

    def __init__(self, position: int) -> None:
        self.position = position
        """The last seq passed on."""
        self.ahead: dict[int, Any] = {}
        """Events that came before their turn, by seq."""

    def offer(self, seq: int, event: Any) -> list[Any]:
        """The events now due, in order (none when ``event`` is early or already passed)."""
        if seq <= self.position:
            return []
        if seq > self.position + 1:
            self.ahead[seq] = event
            return []
        due = [event]
        self.position = seq
        while self.ahead:
            following = self.ahead.pop(self.position + 1, None)
            if following is None:
                break
            due.append(following)
            self.position += 1
        return due
