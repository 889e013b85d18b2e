"""Golden fingerprints: what every table holds for every document, as small hashes.

For each document of ``sample_data/``, of generated documents and of every shared corpus,
at the default policy (exact cl100k counts) and under the estimate: one 64-bit hash of each
table's rows of that document (documents, blocks, chunks, postings). Any change of a chunk
id, text, embed_text, span or breadcrumb changes a hash. The fingerprints are committed
(``tests/golden/fingerprints.parquet``); ``tests/test_golden.py`` recomputes and compares
them, and ``make golden`` writes them again when a change of output is decided.

So that a difference explains itself, two more files are kept beside them:
``columns.parquet``, one hash per set, policy, table and column (over every row of the
set: which column changed), and readable snapshots of the small sets
(``snapshots/SET-POLICY-TABLE.jsonl``, one row per line: the value it held). A test that
finds a document's table changed names the document, the table, the column and the first
row whose value differs, with the value it held where a snapshot has it and the value it
has now.

    python -m tests.golden            # rewrite every set (the shared corpora when present)
    python -m tests.golden --details  # only the column hashes and snapshots
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.pipeline.table_names import OPTIONAL_TABLES
from tests.conftest import CORPORA, REPO, SAMPLE

FILE = REPO / "tests" / "golden" / "fingerprints.parquet"
COLUMNS = FILE.with_name("columns.parquet")
SNAPSHOTS = FILE.with_name("snapshots")
SNAPSHOT_SETS = ("sample",)  # small enough to read: every row kept as it was
SNAPSHOT_TABLES = ("documents", "blocks", "chunks")  # postings follow from the chunks
COLUMN_SCHEMA = pa.schema(
    [
        ("set", pa.string()),
        ("policy", pa.string()),
        ("table", pa.string()),
        ("column", pa.string()),
        ("hash", pa.int64()),
    ]
)
# Policy(**these). The estimate's fingerprints are those of the default policy before its
# counts became cl100k's (chunker mdchunk-6): an output made then reproduces byte for byte
# under --tokenizer estimate; today's default policy is the cl100k policy they were recorded
# beside, and its fingerprints were carried over unchanged.
POLICIES = {"default": {}, "estimate": {"tokenizer": "estimate"}}
TABLES = ("documents", "blocks", "chunks", "postings")
SCHEMA = pa.schema(
    [("set", pa.string()), ("path", pa.string()), ("policy", pa.string())]
    + [(name, pa.int64()) for name in TABLES]
)


def sets() -> dict[str, Path | None]:
    """Name -> input folder of every set (``generated`` is written on demand: None)."""
    found: dict[str, Path | None] = {"sample": SAMPLE, "generated": None}
    if CORPORA.is_dir():
        found.update({p.name: p for p in sorted(CORPORA.iterdir()) if p.is_dir()})
    return found


class Output:
    """What one set made at one policy: its fingerprints (``table``), a hash per table and
    column (``columns``), and every row as the hashes saw it, by table (``rows``: dicts
    with the document's ``path`` under ``_path``)."""

    def __init__(self, table: pa.Table, columns: pa.Table, rows: dict[str, list[dict]]):
        self.table, self.columns, self.rows = table, columns, rows


def fingerprints(name: str, folder: Path | None, policy: str, **run) -> pa.Table:
    """The fingerprint rows of one set at one policy, in path order; ``run``: more keywords
    of ``chunkmill.api.run`` (workers, engine, ray_address)."""
    return output(name, folder, policy, **run).table


def output(name: str, folder: Path | None, policy: str, keep_rows: bool = False, **run) -> Output:
    """``fingerprints`` with the column hashes behind them, and with ``keep_rows`` every row
    (to explain a difference)."""
    from chunkmill import api
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.policy import Policy

    with tempfile.TemporaryDirectory() as tmp:
        if folder is None:
            folder = Path(tmp) / "generated"
            write_generated(folder)
        out = Path(tmp) / "out"
        policy_ = Policy(**POLICIES[policy])
        tables = run.pop("tables", OPTIONAL_TABLES)  # every table a run can write
        api.run(folder, out, policy=policy_, log=RunLog(quiet=True), tables=tables, **run)
        run = runstore.resolve(out)
        paths = pq.read_table(run / "documents.parquet", columns=["doc_id", "path"]).to_pylist()
        hashes, column_hashes, kept = _digest(
            run, {r["doc_id"]: r["path"] for r in paths}, keep_rows
        )
    rows = sorted((r["path"], hashes[r["doc_id"]]) for r in paths)
    columns = {
        "set": [name] * len(rows),
        "path": [p for p, _ in rows],
        "policy": [policy] * len(rows),
    }
    for i, table in enumerate(TABLES):
        columns[table] = [h[i] for _, h in rows]
    named = [{"set": name, "policy": policy, **c} for c in column_hashes]
    return Output(
        pa.table(columns, schema=SCHEMA), pa.Table.from_pylist(named, schema=COLUMN_SCHEMA), kept
    )


# Not hashed as they are: the input folder's absolute path (a clone elsewhere has another),
# and the YAML library's own words for a front matter it refuses (whether there is an error
# is hashed).
_MACHINE = {"source"}
_WORDING = {"front_matter_error"}


def _digest(run: Path, path_of: dict[str, str], keep_rows: bool):
    """(doc_id -> one hash per table of its rows in the table's order; one hash per table
    and column over the set's rows; with ``keep_rows`` every row by table, each with its
    document's ``_doc`` and ``_path``). Rows as the hashes see them: machine-dependent
    values left out, the YAML library's wording reduced to whether there is one."""
    import pyarrow.compute as pc

    digests: dict[str, list] = defaultdict(lambda: [hashlib.sha256() for _ in TABLES])
    doc_of_chunk: dict[str, str] = {}
    column_hashes, kept = [], {}
    for i, table in enumerate(TABLES):
        found = pq.read_table(run / f"{table}.parquet")
        found = found.drop_columns([c for c in _MACHINE if c in found.column_names])
        for c in _WORDING.intersection(found.column_names):
            at = found.column_names.index(c)
            found = found.set_column(at, c, pc.is_valid(found[c]))
        for column in sorted(found.column_names):
            values = json.dumps(found[column].to_pylist(), ensure_ascii=False, default=str)
            column_hashes.append({"table": table, "column": column, "hash": _int(values)})
        kept[table] = [] if keep_rows else None
        for row in found.to_pylist():
            if table == "chunks":
                doc_of_chunk[row["chunk_id"]] = row["doc_id"]
            doc = row["doc_id"] if table != "postings" else doc_of_chunk[row["chunk_id"]]
            line = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
            digests[doc][i].update(line.encode("utf-8", "surrogatepass") + b"\n")
            if keep_rows:
                kept[table].append({**row, "_doc": doc, "_path": path_of.get(doc)})
    hashes = {
        doc: [int.from_bytes(d.digest()[:8], "big", signed=True) for d in ds]
        for doc, ds in digests.items()
    }
    return hashes, column_hashes, kept if keep_rows else {}


def _int(text: str) -> int:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _value(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def explain(
    got: Output,
    recorded_columns: pa.Table,
    snapshot: dict[str, list[dict]] | None,
    path: str,
    table: str,
) -> str:
    """One paragraph on a document whose ``table`` changed: the columns whose hashes
    changed in the set, and the first row of the document where one of them differs from
    the snapshot (set with one), else the value that row has now."""
    want = {(r["table"], r["column"]): r["hash"] for r in recorded_columns.to_pylist()}
    have = {(r["table"], r["column"]): r["hash"] for r in got.columns.to_pylist()}
    changed = sorted(
        c
        for (t, c) in want.keys() | have.keys()
        if t == table and want.get((t, c)) != have.get((t, c))
    )
    now = [r for r in got.rows[table] if r["_path"] == path]
    head = f"{path}: table {table}, columns changed in the set: {', '.join(changed) or '?'}"
    before = [r for r in (snapshot or {}).get(table, []) if r["_path"] == path]
    if snapshot is not None and table in snapshot:
        if len(before) != len(now):
            return f"{head}; {len(before)} rows then, {len(now)} now"
        for i, (old, new) in enumerate(zip(before, now)):
            for column in changed or sorted(new):
                if column in old or column in new:
                    if _value(old.get(column)) != _value(new.get(column)):
                        was, now_ = _around(_value(old.get(column)), _value(new.get(column)))
                        return f"{head}; row {i}, column {column}: was {was}, now {now_}"
        return head
    for i, new in enumerate(now):
        for column in changed:
            return f"{head}; row {i}, column {column} now: {_value(new.get(column))[:300]}"
    return f"{head}; {len(now)} rows now"


def _around(old: str, new: str, width: int = 80) -> tuple[str, str]:
    """The two texts from a little before their first difference, ``width`` characters
    each ("…" marks what is left out)."""
    at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    start = max(0, at - width // 4)

    def cut(text: str) -> str:
        part = text[start : start + width]
        return ("…" if start else "") + part + ("…" if start + width < len(text) else "")

    return cut(old), cut(new)


def write_generated(folder: Path, n: int = 120, seed: int = 20261127) -> None:
    """``n`` documents of every kind of block, in several scripts, some large enough to be
    split (sentences, lines, table rows, code), from a fixed seed."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(n):
        parts = [_front_matter(rng, i)] if rng.random() < 0.3 else []
        for _ in range(rng.randint(1, 12)):
            parts.append(rng.choice(_BLOCKS)(rng))
        ext = rng.choice([".md", ".md", ".mdx", ".txt"])
        (folder / f"doc{i:03d}{ext}").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


_WORDS = (
    "data chunk heading section token model index search query table list code "
    "数据 分块 标题 検索 テーブル 목록 코드 البيانات جدول données Straße κείμενο 😀"
).split()


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _sentences(rng: random.Random) -> str:
    ends = [".", "!", "?", "。", "？"]
    return " ".join(
        _words(rng, rng.randint(3, 14)) + rng.choice(ends) for _ in range(rng.randint(1, 60))
    )


def _heading(rng: random.Random) -> str:
    text = _words(rng, rng.randint(1, 6))
    tail = rng.choice(["", "", f" {{#sec-{rng.randint(0, 9)}}}", " { #id .cls }", " ##"])
    return "#" * rng.randint(1, 6) + " " + text + tail


def _code(rng: random.Random) -> str:
    indent = rng.choice(["", "    ", "\u00a0\u00a0"])
    body = "\n".join(indent + _words(rng, rng.randint(0, 8)) for _ in range(rng.randint(1, 120)))
    closing = "" if rng.random() < 0.1 else "\n```"
    return f"```{rng.choice(['', 'py', 'js'])}\n{body}{closing}"


def _table(rng: random.Random) -> str:
    rows = ["| a | b | c |", "|---|:-:|--:|"]
    rows += [
        f"| {_words(rng, 2)} | {rng.randint(0, 10**6)} | {_words(rng, 3)} |"
        for _ in range(rng.randint(1, 80))
    ]
    return "\n".join(rows)


def _listing(rng: random.Random) -> str:
    mark = rng.choice(["-", "*", "1."])
    return "\n".join(f"{mark} {_words(rng, rng.randint(1, 20))}" for _ in range(rng.randint(1, 30)))


def _other(rng: random.Random) -> str:
    return rng.choice(
        [
            "> " + _sentences(rng),
            "---",
            "![an image](img.png)",
            "<div>\n" + _words(rng, 5) + "\n</div>",
            '<Note type="tip">\n' + _words(rng, 8) + "\n</Note>",
            "import X from './x'",
            "[ref]: https://example.com/ref",
            "{* ../src/app.py hl[3] *}",
            "Setext " + _words(rng, 2) + "\n-------",
            "\t\t\tx",
        ]
    )


_BLOCKS = [_heading, _heading, _sentences, _sentences, _code, _table, _listing, _other]


def _front_matter(rng: random.Random, i: int) -> str:
    title, description = _words(rng, 2), _words(rng, 6)
    return f"---\ntitle: Document {i} {title}\ndescription: {description}\ntags: [a, b]\n---"


def outputs(
    names: list[str] | None = None, keep_rows: bool = False, **run
) -> dict[tuple[str, str], Output]:
    """(set, policy) -> Output of the named sets (all present ones by default)."""
    found = sets()
    return {
        (name, policy): output(name, found[name], policy, keep_rows, **dict(run))
        for name in (names or list(found))
        for policy in POLICIES
    }


def compute(names: list[str] | None = None, **run) -> pa.Table:
    """The fingerprints of the named sets (all present ones by default), both policies."""
    return pa.concat_tables([o.table for o in outputs(names, **run).values()])


def load(names: list[str]) -> pa.Table:
    """The committed fingerprints of the named sets."""
    return _of_sets(pq.read_table(FILE), names)


def load_columns(names: list[str]) -> pa.Table:
    """The committed column hashes of the named sets (none recorded: an empty table)."""
    if not COLUMNS.exists():
        return COLUMN_SCHEMA.empty_table()
    return _of_sets(pq.read_table(COLUMNS), names)


def load_snapshot(name: str, policy: str) -> dict[str, list[dict]] | None:
    """The snapshot rows of a set at a policy, by table, or None when it has none."""
    files = {t: SNAPSHOTS / f"{name}-{policy}-{t}.jsonl" for t in SNAPSHOT_TABLES}
    if not all(f.exists() for f in files.values()):
        return None
    return {
        t: [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        for t, f in files.items()
    }


def _of_sets(table: pa.Table, names: list[str]) -> pa.Table:
    import pyarrow.compute as pc

    return table.filter(pc.is_in(table["set"], pa.array(names)))


def write_details(made: dict[tuple[str, str], Output]) -> None:
    """The column hashes of every set made (replacing theirs) and the snapshots of the
    small sets."""
    kept = pq.read_table(COLUMNS) if COLUMNS.exists() else COLUMN_SCHEMA.empty_table()
    import pyarrow.compute as pc

    names = pa.array(sorted({name for name, _ in made}))
    kept = kept.filter(pc.invert(pc.is_in(kept["set"], names)))
    columns = pa.concat_tables([kept, *(o.columns for o in made.values())])
    pq.write_table(
        columns.sort_by(
            [
                ("set", "ascending"),
                ("policy", "ascending"),
                ("table", "ascending"),
                ("column", "ascending"),
            ]
        ),
        COLUMNS,
        compression="zstd",
    )
    SNAPSHOTS.mkdir(exist_ok=True)
    for (name, policy), o in made.items():
        if name not in SNAPSHOT_SETS or not o.rows:
            continue
        for table in SNAPSHOT_TABLES:
            rows = o.rows[table]
            lines = [
                json.dumps(
                    {k: v for k, v in r.items() if k != "_doc"},
                    sort_keys=True,
                    ensure_ascii=False,
                    default=str,
                )
                for r in rows
            ]
            (SNAPSHOTS / f"{name}-{policy}-{table}.jsonl").write_text(
                "".join(line + "\n" for line in lines), encoding="utf-8"
            )


def main() -> None:
    args = sys.argv[1:]
    details_only = args[:1] == ["--details"]
    names = args[1:] if details_only else args
    made = outputs(names or None)
    for name, policy in made:  # the small sets again, keeping their rows for the snapshots
        if name in SNAPSHOT_SETS:
            made[(name, policy)] = output(name, sets()[name], policy, keep_rows=True)
    if not details_only:
        table = pa.concat_tables([o.table for o in made.values()])
        FILE.parent.mkdir(exist_ok=True)
        pq.write_table(table, FILE, compression="zstd")
        print(f"{FILE}: {table.num_rows} fingerprints", file=sys.stderr)
    write_details(made)
    print(f"{COLUMNS}, {SNAPSHOTS}: written", file=sys.stderr)


if __name__ == "__main__":
    main()
