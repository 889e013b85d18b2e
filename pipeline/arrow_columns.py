"""Arrow columns from Python lists, built from their buffers.

``pa.array``, ``pa.table`` and ``Table.from_pylist`` import pandas on first use whenever it
is installed (pyarrow asks it whether the values are a pandas object): half a second of
start-up for a run that otherwise writes only its small state tables (the runs table, the
file stamps). These builders lay out the same arrays (equal to ``pa.array(values, type)``)
without asking. Types: integers, timestamps, booleans, strings, lists of those and maps of
string to float; ``None`` is null.
"""

from __future__ import annotations

import array
from itertools import accumulate

import pyarrow as pa

_INT_CODES = {8: "b", 16: "h", 32: "i", 64: "q"}


def column(values: list, type: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``type``."""
    if pa.types.is_string(type):
        return _strings(values)
    if pa.types.is_list(type) and not pa.types.is_nested(type.value_type):
        return _lists(values, type)
    if pa.types.is_map(type):
        return _maps(values, type)
    if pa.types.is_boolean(type):
        return _booleans(values)
    if pa.types.is_integer(type) or pa.types.is_timestamp(type):
        return _fixed(values, type)
    raise TypeError(f"no builder for {type}")


def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    """A table of ``schema`` from one list per field."""
    arrays = [column(columns[f.name], f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _validity(values: list) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap of ``values`` (None when nothing is null) and the null count."""
    nulls = values.count(None)
    if not nulls:
        return None, 0
    return _bits(v is not None for v in values), nulls


def _bits(flags) -> pa.Buffer:
    out = bytearray()
    byte = shift = 0
    for flag in flags:
        byte |= bool(flag) << shift
        shift += 1
        if shift == 8:
            out.append(byte)
            byte = shift = 0
    if shift:
        out.append(byte)
    return pa.py_buffer(bytes(out))


def _offsets(lengths) -> pa.Buffer:
    return pa.py_buffer(array.array("i", accumulate(lengths, initial=0)).tobytes())


def _strings(values: list) -> pa.Array:
    valid, nulls = _validity(values)
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    data = pa.py_buffer(b"".join(encoded))
    offsets = _offsets(len(b) for b in encoded)
    return pa.Array.from_buffers(pa.string(), len(values), [valid, offsets, data], nulls)


def _fixed(values: list, type: pa.DataType) -> pa.Array:
    """Integers, and timestamps given as integers or as datetimes (naive ones are UTC)."""
    valid, nulls = _validity(values)
    if pa.types.is_timestamp(type):
        values = [_epoch(v, type.unit) for v in values]
        code = "q"
    else:
        code = _INT_CODES[type.bit_width].upper() if pa.types.is_unsigned_integer(type) else None
        code = code or _INT_CODES[type.bit_width]
    filled = [0 if v is None else v for v in values] if nulls else values
    data = array.array(code, filled).tobytes()
    return pa.Array.from_buffers(type, len(values), [valid, pa.py_buffer(data)], nulls)


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _epoch(value, unit: str) -> int | None:
    """A timestamp's integer in ``unit`` (what pyarrow stores; it truncates sub-units)."""
    if value is None or isinstance(value, int):
        return value
    from datetime import UTC, datetime

    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    per = _PER_SECOND[unit]
    return micros * 1000 if unit == "ns" else micros // (1_000_000 // per)


def _booleans(values: list) -> pa.Array:
    valid, nulls = _validity(values)
    return pa.Array.from_buffers(pa.bool_(), len(values), [valid, _bits(values)], nulls)


def _lists(values: list, type: pa.DataType) -> pa.Array:
    valid, nulls = _validity(values)
    items = [x for v in values if v is not None for x in v]
    offsets = _offsets(0 if v is None else len(v) for v in values)
    return pa.Array.from_buffers(
        type, len(values), [valid, offsets], nulls, children=[column(items, type.value_type)]
    )


def _maps(values: list, type: pa.DataType) -> pa.Array:
    """Maps given as dicts or as lists of (key, item) pairs."""
    if not (pa.types.is_string(type.key_type) and pa.types.is_floating(type.item_type)):
        raise TypeError(f"no builder for {type}")
    valid, nulls = _validity(values)
    pairs = [list(v.items()) if isinstance(v, dict) else v for v in values]
    flat = [p for v in pairs if v is not None for p in v]
    keys = _strings([k for k, _ in flat])
    items = _floats([x for _, x in flat])
    entries = pa.StructArray.from_arrays([keys, items], fields=[type.key_field, type.item_field])
    offsets = _offsets(0 if v is None else len(v) for v in pairs)
    return pa.Array.from_buffers(type, len(values), [valid, offsets], nulls, children=[entries])


def _floats(values: list) -> pa.Array:
    valid, nulls = _validity(values)
    data = array.array("d", (0.0 if v is None else v for v in values)).tobytes()
    return pa.Array.from_buffers(pa.float64(), len(values), [valid, pa.py_buffer(data)], nulls)


def flat(values: pa.ChunkedArray) -> pa.Array:
    """One array of a chunked column. Of no chunks, an empty array made without
    ``combine_chunks``, which builds that one from a Python list (and so imports pandas)."""
    return values.combine_chunks() if values.num_chunks else pa.nulls(0, values.type)


def ranges(runs: list[tuple[int, int]]) -> pa.Array:
    """The int64 positions start, start + 1, ... of every (start, length) run, in order."""
    positions = array.array("q")
    begin = end = 0
    for start, n in runs:  # runs that follow each other are one range
        if start != end:
            positions.extend(range(begin, end))
            begin = start
        end = start + n
    positions.extend(range(begin, end))
    return pa.Array.from_buffers(pa.int64(), len(positions), [None, pa.py_buffer(positions)])


def one_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array of a column: its only chunk as it is (no copy), else ``flat``."""
    if isinstance(values, pa.ChunkedArray):
        return values.chunk(0) if values.num_chunks == 1 else flat(values)
    return values


def utf8_buffers(texts: pa.Array | pa.ChunkedArray) -> tuple:
    """(data, offsets, wide, n): a string column's UTF-8 bytes and its offsets from its first
    row (int64 when wide, else int32), as Arrow buffers the Rust core reads in place (no
    Python string per text); null is empty."""
    texts = one_array(texts)
    if texts.null_count:
        import pyarrow.compute as pc

        texts = pc.fill_null(texts, "")
    if texts.type not in (pa.string(), pa.large_string()):  # string_view from polars
        texts = texts.cast(pa.large_string())
    wide = texts.type == pa.large_string()
    width = 8 if wide else 4
    _, offsets, data = texts.buffers()
    offsets = offsets.slice(texts.offset * width, (len(texts) + 1) * width)
    return (data if data is not None else b""), offsets, wide, len(texts)


def validity(nulls: bytes, n: int) -> pa.Buffer | None:
    """The validity bitmap of ``n`` values from the core's null flags (one byte per value,
    1 for null); None when no value is null."""
    if b"\x01" not in nulls:
        return None
    import pyarrow.compute as pc

    flags = pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(nulls)])
    return pc.equal(flags, 0).buffers()[1]


def utf8_column(data: bytes, offsets: bytes, n: int) -> pa.Array:
    """A large_string array of n texts from their UTF-8 bytes and n + 1 int64 offsets (the
    Rust core's text columns), without a Python string per text."""
    return pa.Array.from_buffers(
        pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def utf8_views(texts: pa.Array | pa.ChunkedArray, rows: list[int] | None = None) -> list:
    """The UTF-8 bytes of a string column's texts (at ``rows``, else all), each a view of
    the column's buffer: no copy, no Python string of a whole document."""
    data, offsets, wide, n = utf8_buffers(texts)
    at = memoryview(offsets).cast("q" if wide else "i")
    data = memoryview(data)
    return [data[at[i] : at[i + 1]] for i in (range(n) if rows is None else rows)]
