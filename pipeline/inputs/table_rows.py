"""Tables of documents (Parquet, JSONL, or an Arrow table in memory): one document per row.

Rows are judged one by one: a line that is not a JSON object (a truncated last line, say),
a text that is not text (a number, a list), a lone surrogate, or a null becomes a reject
(``bad_row``) naming its row; the other rows of the table are read as usual.

A Parquet file is read one row group at a time, in batches of rows, never whole. Before a
row group is read, the sizes its pages declare are checked (``parquet_pages``): a row group
with a page over the size limit is not decompressed, and its rows are rejects
(``too_large``) naming the page. A JSONL line over twice the limit is a reject unparsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from chunkmill.pipeline.doc_limits import DEFAULT_MAX_BYTES
from chunkmill.pipeline.document import RawDocument
from chunkmill.pipeline.inputs.reading import BAD_ROW, DUPLICATE, TOO_LARGE, InputError

TEXT_COLUMNS = ("text", "content", "body", "markdown")
ID_COLUMNS = ("path", "id", "doc_id", "url", "name")


@dataclass(frozen=True)
class BadRow:
    """A row that could not be read at all, and why."""

    why: str
    reason: str = BAD_ROW


def jsonl_rows(lines: Iterable[bytes], max_bytes: int = DEFAULT_MAX_BYTES) -> list[dict | BadRow]:
    """One entry per non-blank line: the parsed object, or why it is not one."""
    rows: list[dict | BadRow] = []
    for n, line in enumerate(lines, 1):
        if len(line) > 2 * max_bytes:  # not parsed: JSON's escapes rarely double a text
            why = f"line {n} holds {len(line)} bytes, over twice the limit of {max_bytes} bytes"
            rows.append(BadRow(f"{why} for a document (--max-bytes)", TOO_LARGE))
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except UnicodeDecodeError as exc:
            rows.append(BadRow(f"line {n} is not UTF-8 (byte {exc.start})"))
            continue
        except ValueError as exc:
            rows.append(BadRow(f"line {n} is not valid JSON: {getattr(exc, 'msg', exc)}"))
            continue
        except RecursionError:  # JSON's nesting has no limit, Python's stack has one
            rows.append(BadRow(f"line {n} holds JSON nested too deeply to read"))
            continue
        if not isinstance(value, dict):
            rows.append(BadRow(f"line {n} holds a JSON {_type(value)}, not an object"))
            continue
        rows.append(value)
    return rows


def arrow_rows(table) -> Iterator[dict | BadRow]:
    """The rows of an Arrow table as dicts; a row that cannot be converted (bytes that are
    not UTF-8 in a string column, say) comes back as a BadRow, alone. Dates, times,
    timestamps and durations are turned into text by Arrow first: Python's datetime
    cannot hold nanoseconds (pyarrow then asks for pandas) nor DuckDB's 'infinity'
    (OverflowError), and a metadata column must never cost its row."""
    import pyarrow as pa

    table = _temporal_as_text(table)
    problems = (UnicodeDecodeError, ValueError, OverflowError, pa.ArrowException)
    for batch in table.to_batches():
        try:
            yield from batch.to_pylist()
            continue
        except problems:
            pass
        for j in range(batch.num_rows):
            try:
                yield batch.slice(j, 1).to_pylist()[0]
            except problems as exc:
                yield BadRow(f"could not be read: {exc}")


BATCH_ROWS = 1024  # rows decoded at a time from a Parquet row group


def parquet_rows(parquet, file, max_bytes: int) -> Iterator[dict | BadRow]:
    """The rows of the ``pyarrow.parquet.ParquetFile`` over the random-access ``file``, one
    row group at a time in batches; the rows of a row group holding a page over the limit
    (``max_bytes``, at least the default: a page holds many documents) as BadRows, unread."""
    import pyarrow as pa

    from chunkmill.pipeline.inputs import parquet_pages

    metadata = parquet.metadata
    ceiling = max(max_bytes, DEFAULT_MAX_BYTES)
    for group in range(metadata.num_row_groups):
        try:
            big = parquet_pages.oversized(file, metadata, group, ceiling)
        except parquet_pages.ThriftError as exc:
            big, damaged = [], f"row group {group}: {exc}"
        else:
            damaged = None
        rows = metadata.row_group(group).num_rows
        if big or damaged:
            why = damaged or _unread(group, big[0], ceiling)
            yield from (BadRow(why, BAD_ROW if damaged else TOO_LARGE) for _ in range(rows))
            continue
        done = 0
        try:
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group]):
                for row in arrow_rows(pa.Table.from_batches([batch])):
                    done += 1
                    yield row
        except (OSError, pa.ArrowException) as exc:  # a damaged page: the rest of its group
            why = f"row group {group} could not be read: {exc}"
            yield from (BadRow(why) for _ in range(rows - done))


def _unread(group: int, page, ceiling: int) -> str:
    where = "its dictionary" if not page.values else f"from its row {page.first_row}"
    return (
        f"row group {group} declares a page of {page.size} bytes in column {page.column!r} "
        f"({where}), over the limit of {ceiling} bytes (--max-bytes): the row group is "
        "not read"
    )


def _temporal_as_text(table):
    """``table`` with its temporal columns cast to text (an ISO-like form; a value out of
    Python's range reads ``<value out of range: N>``)."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_temporal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
    return table


def columns_of(rows: list[dict | BadRow]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        if isinstance(row, dict):
            seen.update(dict.fromkeys(row))
    return list(seen)


def pick(columns: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, src):
    if wanted:
        if wanted not in columns:
            raise InputError(f"{src}: no column {wanted!r} (columns: {', '.join(columns)})")
        return wanted
    for name in candidates:
        if name in columns:
            return name
    if what == "id":
        return None
    raise InputError(
        f"{src}: no {what} column; expected one of {', '.join(candidates)} "
        f"or --text-column (columns: {', '.join(columns)})"
    )


def _type(value) -> str:
    names = {bool: "boolean", int: "number", float: "number", list: "list", dict: "object"}
    return names.get(type(value), type(value).__name__)


def _cell(value) -> str:
    """A metadata cell as text: strings as they are, lists, objects and booleans as JSON
    (as front matter is), numbers and dates as printed."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, dict, bool)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _metadata(row: dict, columns: list[str]) -> tuple[dict[str, str], str | None]:
    """The metadata cells of a row as text, or why they cannot be stored."""
    cells = {}
    for c in columns:
        if row.get(c) is None:
            continue
        try:
            cells[_text(c)] = _text(_cell(row[c]))
        except RecursionError:
            return {}, f"column {c!r} is nested too deeply to store"
    return cells, None


def _text(value: str) -> str:
    """Text safe to store: a lone surrogate shown as a \\uXXXX escape."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _data(value, column: str) -> tuple[bytes | None, str | None]:
    """The bytes of a text cell, or why it has none."""
    if value is None:
        return None, f"column {column!r} is null"
    if isinstance(value, bytes):
        return value, None
    if not isinstance(value, str):
        return None, f"column {column!r} holds a {_type(value)}, not text"
    try:
        return value.encode("utf-8"), None
    except UnicodeEncodeError as exc:
        return None, (
            f"column {column!r} is not valid Unicode text: a lone surrogate "
            f"U+{ord(value[exc.start]):04X} at character {exc.start}"
        )


def _id_path(ident, column: str, i: int) -> tuple[str, str | None]:
    """(path, None) of a row's id, else (a placeholder path, why it is no id). An id is
    text or a whole number (1.0, as a column of integers with a null reads, is 1); a path
    that would climb out of its input (``..``, a leading ``/``) is refused: it would also
    leave the site in a link template."""
    if isinstance(ident, float) and ident.is_integer():
        ident = int(ident)
    if isinstance(ident, bool) or not isinstance(ident, str | int | float):
        what = "null" if ident is None else f"a {_type(ident)}"
        return f"(row {i})", f"column {column!r} is {what}, not an id"
    path = _text(str(ident))
    parts = path.replace("\\", "/").split("/")
    if not path.strip() or path.startswith(("/", "\\")) or ".." in parts:
        return f"(row {i})", f"id {path!r} is not a relative path inside the table"
    return path, None


def row_documents(
    rows: Iterable[dict | BadRow], columns: list[str], selection, source: str
) -> Iterator[RawDocument]:
    """One RawDocument per row: the text column, the id column (else ``row-N``), every
    other column as metadata; a reject (``bad_row``) for a row that cannot be a document,
    and (``duplicate``) for a row whose path an earlier row has: one path is one document
    (its doc_id), and two texts under one id would be packed as one. A table with no
    readable row at all (an empty JSONL file, every line broken) has no columns to pick
    from: its bad rows are rejects and the run's guards judge the rest."""
    if not columns:
        for i, row in enumerate(rows):
            yield RawDocument(f"(row {i})", source, None, f"row {i}: {row.why}", reason=row.reason)
        return
    text_col = pick(columns, selection.text_column, TEXT_COLUMNS, "text", source)
    id_col = pick(columns, selection.id_column, ID_COLUMNS, "id", source)
    others = [c for c in columns if c not in (text_col, id_col)]
    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        if isinstance(row, BadRow):  # no id can be read: a path no id can take
            yield RawDocument(f"(row {i})", source, None, f"row {i}: {row.why}", reason=row.reason)
            continue
        key, bad = f"row-{i}", None
        if id_col:
            key, bad = _id_path(row.get(id_col), id_col, i)
        if bad is not None:  # no path of its own: it takes none from another row
            yield RawDocument(key, source, None, f"row {i}: {bad}", reason=BAD_ROW)
            continue
        if not selection.wants(key):
            continue
        if first.setdefault(key, i) != i:
            why = f"row {i}: the same path as row {first[key]}, which is kept"
            yield RawDocument(key, source, None, why, reason=DUPLICATE)
            continue
        data, why = _data(row.get(text_col), text_col)
        meta, too_deep = _metadata(row, others)
        why = why or too_deep
        if data is None or too_deep:
            yield RawDocument(key, source, None, f"row {i}: {why}", meta, reason=BAD_ROW)
        else:
            yield RawDocument(key, source, data, None, meta)


def table_documents(table, selection, source: str) -> Iterator[RawDocument]:
    """The documents of an Arrow table (a Parquet file's, or one handed to the Python API)."""
    return row_documents(arrow_rows(table), table.column_names, selection, source)


def parquet_documents(file, selection, source: str) -> Iterator[RawDocument]:
    """The documents of the Parquet file open as the random-access ``file``."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(file, buffer_size=1 << 20)  # streamed, not a column chunk at once
    rows = parquet_rows(parquet, file, selection.max_bytes)
    return row_documents(rows, parquet.schema_arrow.names, selection, source)


def jsonl_documents(lines: Iterable[bytes], selection, source: str) -> Iterator[RawDocument]:
    rows = jsonl_rows(lines, selection.max_bytes)
    return row_documents(rows, columns_of(rows), selection, source)
