"""The sizes a Parquet file declares for its pages, read before any page is decompressed.

A Parquet input is read one row group at a time, in batches, so memory follows the largest
page, not the file. A page's size is in the file: the row group's metadata bounds every
page of a column chunk by the chunk's uncompressed size, and where that bound is too high
the page headers (Thrift compact structs in front of each page) give each page's own
uncompressed size and value count. A few kilobytes of well-compressed text can declare a
page of gigabytes: such a page is never decompressed (``oversized``).

Only the fields needed are decoded (sizes and value counts); every other field is skipped
by its type, as the compact protocol allows.
"""

from __future__ import annotations

from typing import NamedTuple


class Page(NamedTuple):
    """One page of a column chunk: its uncompressed size, its values, its first row."""

    size: int
    values: int
    first_row: int
    dictionary: bool


class Oversized(NamedTuple):
    """A page of a row group that is not decompressed, and where it lies."""

    column: str
    size: int
    first_row: int  # in the row group
    values: int  # 0 for a dictionary page


class ThriftError(ValueError):
    """Bytes that are not the page header the column chunk's metadata promised."""


class _Reader:
    """The Thrift compact protocol over a bytes buffer (only what page headers use)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("the header runs past the bytes read")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ThriftError("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int) -> None:
        if kind in (1, 2):  # booleans are in the field header
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.pos += 8
        elif kind == 8:
            length = self.varint()  # read before pos is: += would add to the old pos
            self.pos += length
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip_element(head & 0x0F)
        elif kind == 11:
            size = self.varint()
            types = self.byte() if size else 0
            for _ in range(size):
                self.skip_element(types >> 4)
                self.skip_element(types & 0x0F)
        elif kind == 12:
            self.struct({})
        else:
            raise ThriftError(f"unknown compact type {kind}")

    def skip_element(self, kind: int) -> None:
        if kind in (1, 2):  # a boolean element is one byte of its own
            self.byte()
        else:
            self.skip(kind)

    def struct(self, wanted: dict[int, object]) -> dict[int, object]:
        """The fields of a struct: integers for ids in ``wanted`` mapped to None, nested
        structs for ids mapped to a dict of their own wanted fields; the rest skipped."""
        got: dict[int, object] = {}
        last = 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == 0:
                return got
            delta = head >> 4
            last = last + delta if delta else self.zigzag()
            want = wanted.get(last, False)
            if want is None and kind in (3, 4, 5, 6):
                got[last] = self.zigzag() if kind != 3 else self.byte()
            elif isinstance(want, dict) and kind == 12:
                got[last] = self.struct(want)
            else:
                self.skip(kind)


# PageHeader: 2 uncompressed_page_size, 3 compressed_page_size; 5 data_page_header (1
# num_values), 7 dictionary_page_header (1 num_values), 8 data_page_header_v2 (1 num_values,
# 3 num_rows).
_HEADER = {2: None, 3: None, 5: {1: None}, 7: {1: None}, 8: {1: None, 3: None}}
_HEADER_BYTES = 1 << 16  # far more than any page header holds without huge statistics


def pages(file, start: int, length: int) -> list[Page]:
    """The pages of the column chunk at ``start`` (``length`` compressed bytes) of the
    random-access ``file``: headers only, the pages themselves are skipped."""
    found: list[Page] = []
    pos, end, row = start, start + length, 0
    while pos < end:
        file.seek(pos)
        reader = _Reader(file.read(min(_HEADER_BYTES, end - pos)))
        header = reader.struct(_HEADER)
        size, compressed = header.get(2), header.get(3)
        if size is None or compressed is None or size < 0 or compressed < 0:
            raise ThriftError(f"no page sizes in the page header at byte {pos}")
        v1, dictionary, v2 = header.get(5, {}), header.get(7), header.get(8, {})
        values = v2.get(3, v2.get(1)) if v2 else v1.get(1, 0)
        found.append(Page(size, 0 if dictionary else values or 0, row, dictionary is not None))
        row += 0 if dictionary else values or 0
        pos += reader.pos + compressed
    return found


def oversized(file, metadata, row_group: int, ceiling: int) -> list[Oversized]:
    """The pages of one row group over ``ceiling`` bytes uncompressed, from the file's own
    metadata: a column chunk whose whole uncompressed size is within the ceiling has no such
    page, and is not looked into."""
    group = metadata.row_group(row_group)
    found = []
    for j in range(group.num_columns):
        chunk = group.column(j)
        if chunk.total_uncompressed_size <= ceiling:
            continue
        start = chunk.data_page_offset
        if chunk.has_dictionary_page and chunk.dictionary_page_offset:
            start = min(start, chunk.dictionary_page_offset)
        for page in pages(file, start, chunk.total_compressed_size):
            if page.size > ceiling:
                found.append(
                    Oversized(chunk.path_in_schema, page.size, page.first_row, page.values)
                )
    return found
