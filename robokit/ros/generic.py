"""Messages of a type no builder maps, flattened by their fields (rosbags, protobuf and JSON objects alike).

The first message gives the layout; channels are named after the topic and the field path:
- the scalar fields of a message (numbers, bools as 0/1, times and durations in seconds) form one channel
  (the topic's own for the top-level message, `<topic>/<field>` for a nested one), one dimension per field;
- a numeric array (fixed or variable) is a channel `<topic>/<field>` named `<field>_<i>`, or by a sibling
  string array of the same length; an array of messages is one channel of their scalar fields (`<leaf>_<i>`);
- strings (string arrays as JSON lists) are events, one each time the value changes to a non-empty one;
- the top-level `header` is not a channel (its stamp is the clock; its frame_id is not read), nor is a
  top-level `timestamp` without a header; headers of nested messages are read like any other field.
An array's width is that of its first non-empty value: messages of another length, or with values that are not
numbers, are left out of that channel and counted as a loss. Bytes, channels over MAX_DIMS values and fields
nested deeper than MAX_DEPTH messages are not read; the topic's warnings name them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from robokit import heap
from robokit.ros.fields import header_stamp, message_fields, time_fields
from robokit.ros.topic_builder import Rows, TopicBuilder
from robokit.sources import naming
from robokit.timeline import EventStream, Loss, NumericStream, Stream

MAX_DIMS = 256  # values per channel: wider arrays (blobs such as point data) are not read
MAX_DEPTH = 8  # nested messages
MAX_CHANNELS = 256  # per topic
FieldPath = tuple[str, ...]
Get = Callable[[Any], tuple[Any, ...]]


def _getter(paths: Sequence[FieldPath]) -> Get:
    """The values at `paths` as a tuple (also for one path), in one C-level call per message."""
    get = attrgetter(*(".".join(p) for p in paths))
    return get if len(paths) > 1 else lambda obj: (get(obj),)


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


class _Dims:
    """Scalar fields as dimensions: each a column of the getter's tuple, a time adding its nanoseconds column."""

    def __init__(self) -> None:
        self.paths: list[FieldPath] = []
        self.names: list[str] = []
        self.cols: list[int] = []
        self.nanos: list[int] = []  # -1: not a time

    def add(self, name: str, path: FieldPath, nanos: FieldPath | None = None) -> None:
        self.names.append(name)
        self.cols.append(len(self.paths))
        self.paths.append(path)
        self.nanos.append(-1 if nanos is None else len(self.paths))
        if nanos is not None:
            self.paths.append(nanos)

    def seconds(self, columns: np.ndarray) -> np.ndarray:
        """(N, columns) → (N, dimensions), times in seconds."""
        if len(self.cols) == len(self.paths):  # no times: the columns are the dimensions
            return columns
        out = columns[:, self.cols]
        for i, col in enumerate(self.nanos):
            if col >= 0:
                out[:, i] += columns[:, col] * 1e-9
        return out


class _Channel:
    """One channel of the flattened messages: `add` sees every message, `streams` builds it at the end."""

    def __init__(self, b: GenericBuilder, path: FieldPath) -> None:
        self.b = b
        self.path = path
        self.name = "/".join((b.group, *path))
        self.get = _getter([path])
        self.missing = 0  # messages without the field (JSON objects may lack it)
        self.bad = 0  # messages whose value does not fit the layout
        self.error = ""

    def value(self, msg: Any) -> Any:
        try:
            return self.get(msg)[0]
        except AttributeError:
            self.missing += 1
            return None

    def add(self, msg: Any, sample: int) -> None:
        raise NotImplementedError

    def streams(self) -> list[Stream]:
        raise NotImplementedError

    def numeric(self, samples: np.ndarray, values: np.ndarray, names: Sequence[str]) -> list[Stream]:
        if not len(samples):
            return []
        ts, keep = self.b.ordered(self.name, samples, lambda i: values[i].tobytes())
        return [NumericStream(self.name, ts, heap.take(values, keep), tuple(names), "", origin=self.b.origin)]


class _Scalars(_Channel):
    """The scalar fields of one (nested) message, read by one getter per message."""

    def __init__(self, b: GenericBuilder, path: FieldPath, dims: _Dims) -> None:
        super().__init__(b, path)
        self.dims = dims
        self.get = _getter(dims.paths)
        self.rows = Rows(len(dims.paths))

    def add(self, msg: Any, sample: int) -> None:
        try:
            row = self.get(msg)
        except AttributeError:
            self.missing += 1
            row = tuple(_Channel(self.b, p).value(msg) for p in self.dims.paths)
        try:
            self.rows.add(sample, row)
        except (TypeError, ValueError):  # a JSON null, or a value of another type
            self.rows.add(sample, [_float(v) for v in row])

    def streams(self) -> list[Stream]:
        return self.numeric(self.rows.samples, self.dims.seconds(self.rows.values()), self.dims.names)


class _Array(_Channel):
    """A numeric array field, or an array of messages (`dims`: their scalar fields, one getter column each), of
    one length; rows are written as read (numpy converts them), times combined once at the end."""

    def __init__(self, b: GenericBuilder, path: FieldPath, dims: _Dims | None = None) -> None:
        super().__init__(b, path)
        self.dims = dims
        self.element = _getter(dims.paths) if dims is not None else None
        self.rows: Rows | None = None
        self.length = 0  # of the first non-empty value
        self.other_length = 0

    def add(self, msg: Any, sample: int) -> None:
        value = self.value(msg)
        if value is None or not len(value):
            return
        if self.rows is None:
            self.length = len(value)
            width = self.length * (len(self.dims.paths) if self.dims else 1)
            if width > MAX_DIMS:
                self.b.skip(f"over {MAX_DIMS} values", self.path)
                self.b.drop(self)
                return
            self.rows = Rows(width)
        if len(value) != self.length:
            self.other_length += 1
            return
        if self.element is None:
            self.rows.add(sample, value)
        else:
            self.rows.add(sample, [v for e in value for v in self.element(e)])

    def names(self) -> list[str]:
        """`<field>_<i>`, `<leaf>_<i>` for an array of messages, or a sibling string array of the same length."""
        if self.dims is not None:
            return [f"{leaf}_{i}" for i in range(self.length) for leaf in self.dims.names]
        for text in self.b.texts:
            if text.path[:-1] == self.path[:-1] and len(text.first) == self.length == len(set(text.first)):
                return text.first
        return [f"{self.path[-1]}_{i}" for i in range(self.length)]

    def streams(self) -> list[Stream]:
        if self.other_length:
            self.b.lose(f"{self.other_length} message(s) left out of {self.name}: not {self.length} values long "
                        "(the first message's)", self.other_length)
        if self.rows is None:
            return []
        values = self.rows.values()
        if self.dims is not None:  # (N, elements × columns) → (N, elements × dimensions)
            n, columns = len(values), len(self.dims.paths)
            values = self.dims.seconds(values.reshape(n * self.length, columns)).reshape(n, -1)
        return self.numeric(self.rows.samples, values, self.names())


class _Text(_Channel):
    """A string or string array field: an event each time it changes to a non-empty value."""

    def __init__(self, b: GenericBuilder, path: FieldPath) -> None:
        super().__init__(b, path)
        self.last: Any = None  # the previous value as read (a string array compares before it is joined)
        self.first: list[str] = []  # a string array's first non-empty value: names for sibling arrays
        self.samples: list[int] = []
        self.values: list[str] = []

    def add(self, msg: Any, sample: int) -> None:
        value = self.value(msg)
        if value is None or value == self.last:
            return
        self.last = value
        if not isinstance(value, str):
            items = [str(v) for v in value]
            self.first = self.first or items
            value = json.dumps(items) if items else ""
        if value:  # differs from the previous value, which may have been empty
            self.samples.append(sample)
            self.values.append(value)

    def streams(self) -> list[Stream]:
        if not self.values:
            return []
        ts, keep = self.b.ordered(self.name, self.samples, self.values.__getitem__)
        return [EventStream(self.name, ts, tuple(self.values[i] for i in keep), origin=self.b.origin)]


class _Pending(_Channel):
    """A sequence empty so far: its first non-empty value decides its channel."""

    def add(self, msg: Any, sample: int) -> None:
        value = self.value(msg)
        if value is None or not len(value):
            return
        channel = self.b.layout_field(self.path, value, 0)
        self.b.drop(self, channel)
        if channel is not None:
            channel.add(msg, sample)

    def streams(self) -> list[Stream]:
        return []


def _kind(value: Any) -> str:
    """scalar | text | bytes | array (of numbers) | message | messages | texts | empty (sequence) | other."""
    if isinstance(value, str):
        return "text"
    if value is None or isinstance(value, bool | int | float):
        return "scalar"
    if isinstance(value, np.generic | np.ndarray):
        return ("scalar" if isinstance(value, np.generic) else "array") if value.dtype.kind in "biuf" else "other"
    if isinstance(value, bytes | bytearray | memoryview):
        return "bytes"
    if message_fields(value) is not None:
        return "message"
    if hasattr(value, "keys") or not hasattr(value, "__len__") or not hasattr(value, "__getitem__"):
        return "other"  # maps (protobuf `map<>` fields) and values that are not sequences
    if not len(value):
        return "empty"
    return {"scalar": "array", "text": "texts", "message": "messages"}.get(_kind(value[0]), "other")


class GenericBuilder(TopicBuilder):
    """Channels `<topic>/<field path>` from the fields of a message type without a builder (module docstring)."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.group = "/".join(naming.tokens(topic)) or "topic"
        self.channels: list[_Channel] | None = None
        self.texts: list[_Text] = []
        self.skipped: dict[str, set[str]] = {}  # why → fields not read

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if self.channels is None:
            self.channels = []
            self._layout(msg, (), 0)
        sample = self.clock.add(header_stamp(msg), log_time)
        for channel in list(self.channels):
            try:
                channel.add(msg, sample)
            except (TypeError, ValueError, AttributeError, IndexError) as err:  # JSON values of another shape
                channel.bad += 1
                channel.error = channel.error or f"{type(err).__name__}: {err}"

    def _layout(self, msg: Any, path: FieldPath, depth: int) -> None:
        """Channels for the fields of `msg` at `path`: its scalars together, the others each their own."""
        names = message_fields(msg) or []
        start = len(self.channels or [])
        dims = _Dims()
        for name in names:
            here = (*path, name)
            if not name or "." in name:
                self.skip("field name not usable", here)
                continue
            value = getattr(msg, name, None)
            kind = _kind(value)
            if kind == "scalar":
                dims.add(name, here)
            elif kind != "message":
                self._take(self.layout_field(here, value, depth))
            elif not path and (name == "header" or (name == "timestamp" and "header" not in names)):
                continue  # the clock (fields.header_stamp), not a channel
            elif pair := time_fields(message_fields(value) or []):
                dims.add(name, (*here, pair[0]), (*here, pair[1]))
            elif depth + 1 >= MAX_DEPTH:
                self.skip(f"nested deeper than {MAX_DEPTH} messages", here)
            else:
                self._layout(value, here, depth + 1)
        if len(dims.names) > MAX_DIMS:
            self.skip(f"over {MAX_DIMS} values", path)
        elif dims.names:
            self._take(_Scalars(self, path, dims), start)

    def layout_field(self, path: FieldPath, value: Any, depth: int) -> _Channel | None:
        """The channel of a field that is not a scalar or message, None (told in a warning) when not read."""
        kind = _kind(value)
        if kind in ("text", "texts"):
            text = _Text(self, path)
            self.texts.append(text)
            return text
        if kind == "array":
            return _Array(self, path)
        if kind == "empty":
            return _Pending(self, path)
        if kind == "messages":
            dims = _Dims()
            self._element(value[0], (), path, depth, dims)
            return _Array(self, path, dims) if dims.names else None
        self.skip("bytes" if kind == "bytes" else "not numbers or strings", path)
        return None

    def _element(self, msg: Any, rel: FieldPath, path: FieldPath, depth: int, dims: _Dims) -> None:
        """The scalar fields of an array's element (nested ones dotted) into `dims`; its other fields not read."""
        for name in message_fields(msg) or []:
            here = (*rel, name)
            if not name or "." in name:
                self.skip("field name not usable", (*path, *here))
                continue
            value = getattr(msg, name, None)
            kind = _kind(value)
            pair = time_fields(message_fields(value) or []) if kind == "message" else None
            if kind == "scalar":
                dims.add(".".join(here), here)
            elif pair:
                dims.add(".".join(here), (*here, pair[0]), (*here, pair[1]))
            elif kind != "message":
                self.skip("in an array of messages, not a number", (*path, *here))
            elif depth + 1 >= MAX_DEPTH:
                self.skip(f"nested deeper than {MAX_DEPTH} messages", (*path, *here))
            else:
                self._element(value, here, path, depth + 1, dims)

    def _take(self, channel: _Channel | None, at: int | None = None) -> None:
        """Read `channel` too (at position `at`, else last), unless the topic has MAX_CHANNELS already."""
        assert self.channels is not None
        if channel is None:
            return
        if len(self.channels) >= MAX_CHANNELS:
            self.skip(f"over {MAX_CHANNELS} channels", channel.path)
        else:
            self.channels.insert(len(self.channels) if at is None else at, channel)

    def drop(self, channel: _Channel, replacement: _Channel | None = None) -> None:
        """Stop reading `channel` (or read `replacement` in its place)."""
        assert self.channels is not None
        i = self.channels.index(channel)
        if replacement is None:
            del self.channels[i]
        else:
            self.channels[i] = replacement

    def skip(self, why: str, path: FieldPath) -> None:
        self.skipped.setdefault(why, set()).add("/".join((self.group, *path)))

    def lose(self, why: str, messages: int) -> None:
        self.losses.append(Loss(self.topic, why, messages))
        self.warnings.append(f"{self.topic}: {why}")

    def build(self) -> list[Stream]:
        channels = self.channels or []
        streams = [s for c in channels for s in c.streams()]
        for c in channels:
            if c.bad:
                self.lose(f"{c.bad} message(s) left out of {c.name}: values of another shape ({c.error})", c.bad)
            if c.missing:
                self.warnings.append(f"{self.topic}: {c.missing} message(s) without the field(s) of {c.name}")
        for why, fields in self.skipped.items():
            self.warnings.append(f"{self.topic}: not read ({why}): {', '.join(sorted(fields))}")
        return streams
