"""Golden fingerprints: what every table holds for every document, as small hashes.

For each document of ``sample_data/``, of generated documents and of every shared corpus,
at the default policy (exact cl100k counts) and under the estimate: one 64-bit hash of each
table's rows of that document (documents, blocks, chunks, postings). Any change of a chunk
id, text, embed_text, span or breadcrumb changes a hash. The fingerprints are committed
(``tests/golden/fingerprints.parquet``); ``tests/test_golden.py`` recomputes and compares
them, and ``make golden`` writes them again when a change of output is decided.

    python -m tests.golden            # rewrite every set (the shared corpora when present)
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


def fingerprints(name: str, folder: Path | None, policy: str, **run) -> pa.Table:
    """The fingerprint rows of one set at one policy, in path order; ``run``: more keywords
    of ``chunkmill.api.run`` (workers, engine, ray_address)."""
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
        hashes = _hashes(run)
        paths = pq.read_table(run / "documents.parquet", columns=["doc_id", "path"]).to_pylist()
    rows = sorted((r["path"], hashes[r["doc_id"]]) for r in paths)
    columns = {
        "set": [name] * len(rows),
        "path": [p for p, _ in rows],
        "policy": [policy] * len(rows),
    }
    for i, table in enumerate(TABLES):
        columns[table] = [h[i] for _, h in rows]
    return pa.table(columns, schema=SCHEMA)


# Not hashed as they are: the input folder's absolute path (a clone elsewhere has another),
# and the YAML library's own words for a front matter it refuses (whether there is an error
# is hashed).
_MACHINE = {"source"}
_WORDING = {"front_matter_error"}


def _hashes(run: Path) -> dict[str, list[int]]:
    """doc_id -> one hash per table of its rows, in the table's own order."""
    digests: dict[str, list] = defaultdict(lambda: [hashlib.sha256() for _ in TABLES])
    doc_of_chunk: dict[str, str] = {}
    for i, table in enumerate(TABLES):
        for row in pq.read_table(run / f"{table}.parquet").to_pylist():
            if table == "chunks":
                doc_of_chunk[row["chunk_id"]] = row["doc_id"]
            doc = row["doc_id"] if table != "postings" else doc_of_chunk[row["chunk_id"]]
            for key in _MACHINE.intersection(row):
                del row[key]
            for key in _WORDING.intersection(row):
                row[key] = row[key] is not None
            line = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
            digests[doc][i].update(line.encode("utf-8", "surrogatepass") + b"\n")
    return {
        doc: [int.from_bytes(d.digest()[:8], "big", signed=True) for d in ds]
        for doc, ds in digests.items()
    }


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


def compute(names: list[str] | None = None, **run) -> pa.Table:
    """The fingerprints of the named sets (all present ones by default), both policies."""
    found = sets()
    parts = [
        fingerprints(name, found[name], policy, **run)
        for name in (names or list(found))
        for policy in POLICIES
    ]
    return pa.concat_tables(parts)


def load(names: list[str]) -> pa.Table:
    """The committed fingerprints of the named sets."""
    import pyarrow.compute as pc

    table = pq.read_table(FILE)
    return table.filter(pc.is_in(table["set"], pa.array(names)))


def main() -> None:
    table = compute(sys.argv[1:] or None)
    FILE.parent.mkdir(exist_ok=True)
    pq.write_table(table, FILE, compression="zstd")
    print(f"{FILE}: {table.num_rows} fingerprints", file=sys.stderr)


if __name__ == "__main__":
    main()
