"""The documents stage: decoding, ids, rejects, and front matter."""

from __future__ import annotations

import hashlib

import pytest

from chunkmill.pipeline import frontmatter
from chunkmill.pipeline.document import RawDocument, decode, make_doc_id


def _doc(data: bytes, path: str = "a/b.md"):
    return decode(RawDocument(path=path, source="root", data=data))


def test_bom_is_stripped_and_crlf_kept():
    kind, row = _doc("\ufeff# T\r\n\r\nbody\r\n".encode())
    assert kind == "document"
    assert row["had_bom"] is True
    assert row["text"] == "# T\r\n\r\nbody\r\n"
    assert row["newline"] == "crlf"
    assert row["n_lines"] == 3
    assert row["content_hash"] == hashlib.sha256("\ufeff# T\r\n\r\nbody\r\n".encode()).hexdigest()


def test_doc_id_depends_on_path_not_content():
    _, one = _doc(b"first version")
    _, two = _doc(b"second version")
    _, other = _doc(b"first version", path="a/c.md")
    assert one["doc_id"] == two["doc_id"] == make_doc_id("a/b.md")
    assert one["content_hash"] != two["content_hash"]
    assert other["doc_id"] != one["doc_id"]


def test_invalid_utf8_is_rejected_with_offset():
    kind, row = _doc(b"ok then \xff\xfe bad")
    assert kind == "reject"
    assert row["reason"] == "invalid_utf8"
    assert "byte offset 8" in row["detail"]


def test_nul_byte_is_binary():
    kind, row = _doc(b"\x89PNG\r\n\x00\x00")
    assert (kind, row["reason"]) == ("reject", "binary")
    assert "byte offset 6" in row["detail"]


def test_unreadable_and_too_large():
    kind, row = decode(RawDocument("x.md", "r", None, "could not read: Permission denied"))
    assert (kind, row["reason"]) == ("reject", "unreadable")
    assert "Permission denied" in row["detail"]
    kind, row = decode(RawDocument("x.md", "r", b"12345"), max_bytes=4)
    assert (kind, row["reason"]) == ("reject", "too_large")


def test_empty_file_is_a_document():
    kind, row = _doc(b"")
    assert kind == "document"
    assert row["n_chars"] == 0 and row["n_lines"] == 0 and row["newline"] == "none"


def test_format_and_mdx_from_extension():
    assert _doc(b"x", "n.txt")[1]["format"] == "text"
    assert _doc(b"x", "n.mdx")[1]["mdx"] is True
    assert _doc(b"x", "n.md")[1]["mdx"] is False
    assert decode(RawDocument("n.md", "r", b"x"), mdx="on")[1]["mdx"] is True
    assert decode(RawDocument("n.mdx", "r", b"x"), mdx="off")[1]["mdx"] is False


def test_yaml_front_matter_values():
    _, row = _doc(b"---\ntitle: Hi\ntags: [a, b]\nn: 3\ndate: 2024-01-02\n---\n# Body\n")
    fm = dict(row["front_matter"])
    # a date is ISO text, not JSON-quoted: --meta date=2024-01-02 must match it
    assert fm == {"title": "Hi", "tags": '["a", "b"]', "n": "3", "date": "2024-01-02"}
    assert row["front_matter_format"] == "yaml" and row["front_matter_error"] is None


def test_front_matter_dates_and_times_are_iso_text():
    _, row = _doc(
        b"---\nat: 2024-12-23T10:30:00Z\nlocal: 2024-12-23 10:30:00\nl: [2024-01-02]\n---\nx\n"
    )
    fm = dict(row["front_matter"])
    assert fm == {
        "at": "2024-12-23T10:30:00+00:00",
        "local": "2024-12-23T10:30:00",
        "l": '["2024-01-02"]',
    }
    _, row = _doc(b"+++\nday = 2024-12-23\nat = 07:32:00\n+++\nx\n")
    assert dict(row["front_matter"]) == {"day": "2024-12-23", "at": "07:32:00"}


@pytest.mark.parametrize(
    ("body", "error"),
    [
        # "billion laughs": 9 levels of 9 aliases would expand to 387 million values
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "\n".join(
                f"{c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")
            ),
            "aliases expand to more than 10000 values",
        ),
        ("k: " + "[" * 20_000 + "]" * 20_000, "nested deeper than 64 levels"),  # segfaulted
        ("k:\n" + "- " * 3_000 + "x", "nested deeper than 64 levels"),
        ("a: &a [1, *a]", "recursive alias *a"),
        ("a: *nowhere", "undefined alias *nowhere"),
    ],
)
def test_hostile_yaml_is_refused_and_the_document_goes_on(body, error):
    kind, row = _doc(f"---\n{body}\n---\n# Body\n\ntext\n".encode())
    assert kind == "document" and row["front_matter"] is None
    assert row["front_matter_error"] == f"YAML front matter not parsed: {error}"
    assert row["text"].startswith("---\n")  # the raw text is kept


def test_the_yaml_librarys_own_nesting_refusal_gets_our_reason(monkeypatch):
    # newer YAML libraries refuse deep flow nesting while scanning ahead, before any event
    # of the nested collections: the refusal is ours whatever the library says
    real = frontmatter.yaml.parse

    def scanner_that_refuses_early(text, Loader):
        for event in real(text, Loader=Loader):
            if isinstance(event, frontmatter.yaml.SequenceStartEvent):
                mark = frontmatter.yaml.Mark("<string>", 1002, 0, 1002, None, None)
                raise frontmatter.yaml.scanner.ScannerError("while nesting", None, "too deep", mark)
            yield event

    monkeypatch.setattr(frontmatter.yaml, "parse", scanner_that_refuses_early)
    _, row = _doc(f"---\nk: {'[' * 2000}{']' * 2000}\n---\nx\n".encode())
    assert row["front_matter_error"] == "YAML front matter not parsed: nested deeper than 64 levels"
    # a shallow collection keeps the library's error (the "*" makes it read for aliases)
    _, row = _doc(b"---\nk: [a, '*b']\n---\nx\n")
    assert row["front_matter_error"].startswith("invalid YAML front matter")


def test_aliases_of_a_long_text_are_refused_and_the_document_kept():
    # few aliases, each of a 100 KB text: their JSON would be megabytes per document
    body = f"s: &s {'x' * 100_000}\nl: [{', '.join(['*s'] * 50)}]"
    kind, row = _doc(f"---\n{body}\n---\n# Body\n\ntext\n".encode())
    assert kind == "document" and row["front_matter"] is None
    assert row["front_matter_error"] == (
        "YAML front matter not parsed: aliases expand to more than 1000000 characters"
    )
    assert row["text"].startswith("---\n") and row["text"].endswith("text\n")


def test_yaml_within_the_budgets_still_parses():
    body = "base: &b {x: 1}\nuse: [*b, *b]\n" + "d: " + "[" * 60 + "]" * 60
    _, row = _doc(f"---\n{body}\n---\nx\n".encode())
    assert row["front_matter_error"] is None
    assert dict(row["front_matter"])["use"] == '[{"x": 1}, {"x": 1}]'


def test_toml_front_matter():
    _, row = _doc(b'+++\ntitle = "T"\n[params]\nx = 1\n+++\ntext\n')
    assert dict(row["front_matter"]) == {"title": "T", "params": '{"x": 1}'}
    assert row["front_matter_format"] == "toml"


def test_malformed_front_matter_keeps_document():
    kind, row = _doc(b'---\ntitle: "open\n---\n# Still here\n')
    assert kind == "document"
    assert row["front_matter"] is None
    assert row["front_matter_error"].startswith("invalid YAML front matter")
    fm = frontmatter.detect(row["text"])
    assert fm.raw == '---\ntitle: "open\n---'


def test_front_matter_that_is_not_a_mapping():
    fm = frontmatter.detect("---\n- a\n- b\n---\n")
    assert fm.data is None and "not a mapping" in fm.error


def test_dashes_that_are_not_front_matter():
    # never closed: a thematic break followed by text
    assert frontmatter.detect("---\nJust text\n") is None
    # not at the very top
    assert frontmatter.detect("Intro\n---\ntitle: x\n---\n") is None
    # setext underline later in the file
    assert frontmatter.detect("Title\n---\n\nMore\n---\n") is None
    # '----' is not a front matter opener
    assert frontmatter.detect("----\na: 1\n----\n") is None


def test_front_matter_with_crlf():
    fm = frontmatter.detect("---\r\na: 1\r\n---\r\n# H\r\n")
    assert fm.data == {"a": "1"} and fm.raw == "---\r\na: 1\r\n---"


# --- the Rust core's documents stage against a reference in Python ----------------------


def _reference(data: bytes, path: str, max_bytes: int = 1 << 28) -> tuple:
    """What the documents stage decides, decided by Python's own decoder: (reason, detail)
    of a reject, or (had_bom, n_chars, n_lines, newline, front matter format and body)."""
    if len(data) > max_bytes:
        return "too_large", f"{len(data)} bytes is over the limit of {max_bytes} bytes"
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        return "invalid_utf8", "UTF-32 text (byte order mark at byte 0): save it as UTF-8"
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "invalid_utf8", "UTF-16 text (byte order mark at byte 0): save it as UTF-8"
    if b"\x00" in data:
        return "binary", f"NUL byte at byte offset {data.find(0)}: looks like a binary file"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "invalid_utf8", f"not valid UTF-8 at byte offset {exc.start}: {exc.reason}"
    had_bom = text.startswith("\ufeff")
    text = text[1:] if had_bom else text
    crlf = text.count("\r\n")
    cr, lf = text.count("\r") - crlf, text.count("\n") - crlf
    kinds = [name for name, n in (("crlf", crlf), ("cr", cr), ("lf", lf)) if n]
    newline = "none" if not kinds else kinds[0] if len(kinds) == 1 else "mixed"
    lines = 0 if not text else crlf + cr + lf + (0 if text.endswith(("\n", "\r")) else 1)
    found = frontmatter.locate(text) if path.endswith(".md") else None
    fm = None if found is None else (found[0], text[found[1] : found[2]])
    return had_bom, len(text), lines, newline, fm


def _core_view(data: bytes, path: str, max_bytes: int = 1 << 28) -> tuple:
    kind, row = decode(RawDocument(path, "root", data), max_bytes=max_bytes)
    if kind == "reject":
        return row["reason"], row["detail"]
    fm = None
    if row["front_matter_format"]:
        found = frontmatter.locate(row["text"])
        fm = (row["front_matter_format"], row["text"][found[1] : found[2]])
    return row["had_bom"], row["n_chars"], row["n_lines"], row["newline"], fm


EDGES = [
    b"", b"\n", b"\r", b"\r\n", b"a", b"a\rb\nc\r\nd", b"\xef\xbb\xbf", b"\xef\xbb\xbf# T\r\n",
    b"ab\x80", b"ab\xc3", b"\xc0\xaf", b"\xed\xa0\x80x", b"\xf4\x90\x80\x80", b"\xe0\x80\x80",
    b"\xf5x", b"\xe2\x82", b"\xe2\x82x", b"\xff\xfe\x00\x00#", b"\xfe\xff\x00#", b"a\x00b",
    b"---\nt: 1\n---\nx", b"---  \r\nt: 1\r\n...\r\n", b"+++\nt = 1\n+++\n", b"---\nno close",
    "caf\u00e9 \U0001f600 \u2028 \u0085\n".encode(), b"x" * 10,
]  # fmt: skip


@pytest.mark.parametrize("data", EDGES)
def test_the_core_decodes_as_python_does(data):
    assert _core_view(data, "e.md", 9) == _reference(data, "e.md", 9)
    assert _core_view(data, "e.txt") == _reference(data, "e.txt")


def test_random_bytes_decode_as_python_does():
    import random

    rng = random.Random(11)
    alphabet = [b"a", b"\n", b"\r", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
                b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xff", b"---",
                b"\xef\xbb\xbf", b"\x00"]  # fmt: skip
    for _ in range(3000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _core_view(data, "r.md") == _reference(data, "r.md"), data


@pytest.mark.corpus
def test_every_corpus_file_decodes_as_python_does():
    from tests.conftest import corpus_dir

    for path in sorted(corpus_dir().rglob("*")):
        if path.is_file() and path.suffix in (".md", ".mdx", ".markdown", ".txt"):
            data = path.read_bytes()
            name = "x.md" if path.suffix != ".txt" else "x.txt"
            assert _core_view(data, name) == _reference(data, name), path


def test_yaml_read_once_or_twice_gives_the_same_front_matter(monkeypatch):
    """YAML that can hold no alias and nests little is not read for aliases first; the
    front matter stored is the same as when every body is, and deep nesting is refused
    however it is written."""
    from chunkmill.pipeline import safe_yaml

    bodies = ["a: 1\nb: [x, y]\nc: {d: e}", "t: 'x*y'\nlist:\n- 1\n- 2", "a: b", "a: [b"]
    bodies += [b + "\n" + "\n".join(f"k{i}: -{i}" for i in range(70)) for b in bodies]
    once = [frontmatter.parsed("yaml", b) for b in bodies]
    assert sum(safe_yaml._plain(b) for b in bodies) == 3  # both paths are taken
    monkeypatch.setattr(safe_yaml, "_plain", lambda body: False)
    assert [frontmatter.parsed("yaml", b) for b in bodies] == once
    monkeypatch.undo()
    flow = "k: " + "[" * 70 + "]" * 70
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(70)) + "  " * 70 + "v"
    for deep in (flow, block, "- " * 70 + "x"):
        assert safe_yaml.refusal(deep) == "nested deeper than 64 levels", deep[:20]
