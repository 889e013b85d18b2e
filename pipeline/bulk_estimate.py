"""The token estimate of a whole table of texts at once (the blocks stage's est_tokens).

``tokens.estimate_expr`` counts every character class with a regular expression: a pass
per class and a step per match (a pass over ``[A-Za-z]`` steps once per letter), and
polars plans the query anew for every batch. Here numpy reads every class of every row off
the texts' UTF-8 bytes in a few passes: each byte's ASCII class is looked up in a table,
the code point of each non-ASCII character is read off its bytes and tested against the
script ranges, and the totals are counted per row. The weighting then repeats
``estimate_expr``'s float operations in the same order, so the numbers are the same to the
bit (tests/test_tokens.py checks this module against the expression on random texts). The
classes come from ``tokens.CLASSES``, ``tokens.CLASS_RANGES`` and ``tokens.BREAKS``.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mdchunk.pipeline import tokens
from mdchunk.pipeline.kinds import CODE_LIKE

_ASCII = ("letters", "digits", "punct", "space", "controls")  # ASCII classes of one character


def _byte_set(pattern: str) -> frozenset[int]:
    """The ASCII bytes that are a character matching ``pattern``."""
    return frozenset(c for c in range(128) if re.fullmatch(pattern, chr(c)))


def _halves(pattern: str) -> tuple[str, str]:
    """A BREAKS pattern's two one-character classes."""
    return re.fullmatch(r"(\[[^\]]+\])(\[[^\]]+\])", pattern).groups()


_BREAK_SETS = [tuple(map(_byte_set, _halves(p))) for p in tokens.BREAKS]
_CLASS_SETS = {name: _byte_set(tokens.CLASSES[name]) for name in _ASCII}
assert tokens.CLASSES["words"] == tokens.CLASSES["letters"] + "+", "a word is a run of letters"
assert tokens.CLASSES["numbers"] == tokens.CLASSES["digits"] + "+", "a number is a run of digits"
for _a, _b in _BREAK_SETS:  # so matches cannot overlap, and counting pairs counts matches
    assert not _a & _b, "the two characters of a break must differ in class"


def _code_table() -> tuple[np.ndarray, int]:
    """Every byte value's code: bytes of the same code are in the same classes and break
    halves, and are all ASCII, all UTF-8 lead bytes or all continuation bytes. Letters get
    the lowest codes (a letter is ``code < letter_codes``), digits the next ones."""
    sets = [*_CLASS_SETS.values(), *(s for pair in _BREAK_SETS for s in pair)]
    signature = [(c >= 0x80, c >= 0xC0, *(c in s for s in sets)) for c in range(256)]
    letters = {signature[c] for c in _CLASS_SETS["letters"]}
    digits = {signature[c] for c in _CLASS_SETS["digits"]}
    order = sorted(set(signature), key=lambda sig: (sig not in letters, sig not in digits, sig))
    code = np.array([order.index(sig) for sig in signature], np.uint8)
    return code, len(letters), len(letters) + len(digits)


_CODE, _LETTER_CODES, _DIGIT_CODES = _code_table()  # letters < _LETTER_CODES <= digits < ...
_N_CODES = int(_CODE.max()) + 1
_MEMBERS = {  # class -> its codes
    name: np.array(sorted({int(_CODE[c]) for c in s}), np.intp) for name, s in _CLASS_SETS.items()
}
_MEMBERS["non_ascii"] = np.unique(_CODE[0xC0:])  # lead bytes: one a character
_MEMBERS["continuation"] = np.unique(_CODE[0x80:0xC0])
_BREAK_PAIRS = np.zeros(_N_CODES * _N_CODES, np.uint8)  # code pair -> BREAKS it matches
for _a, _b in _BREAK_SETS:
    for _pair in {int(_CODE[x]) * _N_CODES + int(_CODE[y]) for x in _a for y in _b}:
        _BREAK_PAIRS[_pair] += 1
assert _BREAK_PAIRS.max() <= 1, "a pair of characters is one break at most"
# A byte's state: its code, whether it starts a run (a letter that does not follow a letter,
# a word; a digit that does not follow a digit, a number), whether it starts a break
_STATES = 4 * _N_CODES
assert _STATES <= 256
_RUN_CLASS = np.zeros(_N_CODES, np.uint8)  # code -> 1 letter, 2 digit, 0 other
_RUN_CLASS[:_LETTER_CODES], _RUN_CLASS[_LETTER_CODES:_DIGIT_CODES] = 1, 2
_PAYLOAD = np.array([0, 0, 0x1F, 0x0F, 0x07], np.int32)  # a lead byte's bits, by length


# Rows longer than this many bytes are counted by polars' regular expressions, which stream
# over the text: numpy holds several arrays of one to eight bytes per byte of input at once,
# which for a 30 MB paragraph (a minified blob on one line) passed a worker's --doc-memory.
LARGE_ROW = 1 << 20


def counts(texts: pa.Array | pa.ChunkedArray) -> dict[str, np.ndarray]:
    """Per row of ``texts`` (no nulls), the count of every class of ``tokens.CLASSES``,
    ``breaks`` (the matches of the BREAKS together), ``bytes`` and ``chars``."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    if texts.type not in (pa.string(), pa.large_string()):  # string_view, from polars
        texts = texts.cast(pa.large_string())
    large = pc.greater(pc.binary_length(texts), LARGE_ROW)
    if not pc.any(large).as_py():
        return _counts(texts)
    rows = np.flatnonzero(large.to_numpy(zero_copy_only=False))
    out = _counts(pc.if_else(large, pa.scalar("", texts.type), texts))
    for name, values in _regex_counts(texts.take(pa.array(rows))).items():
        out[name][rows] = values
    return out


def _regex_counts(texts: pa.Array) -> dict[str, np.ndarray]:
    """``counts`` of a few long texts, by the patterns themselves (polars)."""
    text = pl.col("text")
    exprs = {name: text.str.count_matches(p) for name, p in tokens.CLASSES.items()}
    exprs["breaks"] = sum(text.str.count_matches(p) for p in tokens.BREAKS)
    exprs["bytes"] = text.str.len_bytes()
    exprs["chars"] = text.str.len_chars()
    frame = pl.DataFrame({"text": pl.Series(texts)}).select(
        **{name: expr.cast(pl.Int64) for name, expr in exprs.items()}
    )
    return {name: frame[name].to_numpy() for name in exprs}


def _counts(texts: pa.Array) -> dict[str, np.ndarray]:
    data, offsets = _utf8(texts)
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    row = np.repeat(np.arange(n, dtype=np.intp), lengths)
    totals = np.bincount(row * _STATES + _states(data, offsets), minlength=n * _STATES)
    totals = totals.reshape(n, _N_CODES, 2, 2)
    by_code = totals.sum(axis=(2, 3))
    out = {name: by_code[:, codes].sum(axis=1) for name, codes in _MEMBERS.items()}
    runs = totals[:, :, 1, :].sum(axis=2)  # per row and code: the runs it starts
    out["words"] = runs[:, :_LETTER_CODES].sum(axis=1)
    out["numbers"] = runs[:, _LETTER_CODES:_DIGIT_CODES].sum(axis=1)
    out["breaks"] = totals[:, :, :, 1].sum(axis=(1, 2))
    out["bytes"] = lengths
    out["chars"] = lengths - out.pop("continuation")

    where, points = _code_points(data)
    rows = row[where]
    for name, ranges in tokens.CLASS_RANGES.items():
        if name in _TABLES:  # many ranges: one lookup per character
            inside = _TABLES[name][points]
        else:
            inside = np.zeros(len(points), bool)
            for lo, hi in ranges:
                inside |= (points >= lo) & (points <= hi)
        out[name] = np.bincount(rows[inside], minlength=n)
    return out


def _table(ranges) -> np.ndarray:
    """Whether each code point (0 to U+10FFFF) is in ``ranges``."""
    table = np.zeros(0x110000, bool)
    for lo, hi in ranges:
        table[lo : hi + 1] = True
    return table


# classes of many ranges (the Han characters a vocabulary splits) are looked up, not compared
_TABLES = {name: _table(r) for name, r in tokens.CLASS_RANGES.items() if len(r) > 8}


def _states(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Every byte's state: 4 * code + 2 * (starts a run) + (starts a break)."""
    first = np.zeros(len(data) + 1, bool)  # the first byte of a text
    first[offsets[:-1]] = True
    code = np.take(_CODE, data)
    # 1 letter, 2 digit, 0 other; a run starts where a letter or digit does not follow
    # one of its own class in its own text
    run = np.take(_RUN_CLASS, code)
    start = run > 0
    start[1:] &= (run[1:] != run[:-1]) | first[1:-1]
    state = code * np.uint8(4) + start.view(np.uint8) * np.uint8(2)
    if len(data) > 1:
        pair = np.take(_BREAK_PAIRS, code[:-1] * np.uint8(_N_CODES) + code[1:])
        pair[first[1:-1]] = 0  # a pair across two texts
        state[:-1] += pair
    return state


def estimates(
    bias: str, texts: pa.Array, kinds: pa.Array, documents: pa.Array | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(characters, estimated tokens) of every row: ``tokens.estimate_expr`` with the same
    arguments, to the bit."""
    c = counts(texts)
    english = pl.from_arrow(texts).str.count_matches(tokens.ENGLISH_PATTERN).to_numpy()
    c["foreign"] = np.where(_foreign(c["words"], english, documents), c["letters"], 0)
    wide = 2 * c["two_byte"] + 3 * (c["cjk"] + c["hangul"])
    c["other"] = c["bytes"] - (c["chars"] - c["non_ascii"]) - wide
    f = {name: c[name].astype(np.float64) for name in tokens.WEIGHTED}
    prose = tokens._weighted(f, tokens.weights(bias, "prose"))
    code = tokens._weighted(f, tokens.weights(bias, "code"))
    code_like = pc.is_in(kinds, value_set=pa.array(sorted(CODE_LIKE))).to_numpy(False)
    value = np.maximum(np.where(code_like, code, prose), f["letters"] * tokens.LETTER_FLOOR)
    return c["chars"].astype(np.int32), np.ceil(value).astype(np.int32)


def _foreign(words: np.ndarray, english: np.ndarray, documents: pa.Array | None) -> np.ndarray:
    """Which rows count their letters as another language's (``tokens.class_exprs``)."""
    judged_english = (words >= tokens.FOREIGN_MIN_WORDS) & _reads_english(english, words)
    if documents is None:
        return (words >= tokens.FOREIGN_MIN_WORDS) & ~judged_english
    group = pc.dictionary_encode(documents.combine_chunks()).indices.to_numpy(False)
    in_document = _reads_english(
        np.bincount(group, weights=english)[group], np.bincount(group, weights=words)[group]
    )
    return ~in_document & ~judged_english


def _reads_english(english: np.ndarray, words: np.ndarray) -> np.ndarray:
    return english.astype(np.float64) >= tokens.FOREIGN_SHARE * words.astype(np.float64)


def _code_points(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(byte offset, code point) of every non-ASCII character of valid UTF-8 ``data``."""
    where = np.flatnonzero(data >= 0xC0)
    lead = data[where].astype(np.int32)
    length = 2 + (lead >= 0xE0) + (lead >= 0xF0)
    points = lead & _PAYLOAD[length]
    for k in (1, 2, 3):
        more = length > k
        points[more] = (points[more] << 6) | (data[where[more] + k] & 0x3F)
    return where, points


def _utf8(texts: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, offsets) of a string array: row i is ``bytes[offsets[i]:offsets[i + 1]]``.
    The bytes are not copied (for string and large_string arrays of one chunk)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks() if texts.num_chunks != 1 else texts.chunk(0)
    if texts.null_count:
        raise ValueError("texts must not be null")
    if texts.type not in (pa.string(), pa.large_string()):
        texts = texts.cast(pa.large_string())
    width = np.int32 if texts.type == pa.string() else np.int64
    _, offset_buffer, data_buffer = texts.buffers()
    offsets = np.frombuffer(offset_buffer, width, len(texts) + 1, texts.offset * width().itemsize)
    start = int(offsets[0])
    offsets = offsets.astype(np.int64) - start
    if data_buffer is None:  # every text empty
        return np.zeros(0, np.uint8), offsets
    return np.frombuffer(data_buffer, np.uint8, int(offsets[-1]), start), offsets
