"""What the sync tests share: a corpus that changes every night, and a reading of a store's
table that does not go through chunkmill (LanceDB's and PostgreSQL's own clients), compared
with the published chunks and with a fresh embedding of each text."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import polars as pl

from chunkmill.pipeline import runstore
from tests.sync_embedder import vector

EMBEDDER = "python:tests.sync_embedder:embed"


class Nights:
    """A copy of ``src`` changed a little each night: edits, adds, deletes, renames, and on
    request the copy taken at the start put back (a restore from a backup)."""

    def __init__(self, src: Path, root: Path, rng: random.Random):
        self.root, self.rng, self.made = root, rng, 0
        shutil.copytree(src, root)
        self.backup = root.with_name(root.name + "-backup")
        shutil.copytree(src, self.backup)

    def files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.suffix in (".md", ".mdx"))

    def edit(self) -> None:
        path = self.rng.choice(self.files())
        lines = path.read_text(encoding="utf-8").split("\n")
        prose = [k for k, line in enumerate(lines) if line[:1].isalpha()]
        if not prose:
            lines.append(f"\nA new paragraph {self.rng.random():.6f}.")
        else:
            k = self.rng.choice(prose)
            lines[k] = f"{lines[k]} Edited {self.rng.random():.6f}."
        path.write_text("\n".join(lines), encoding="utf-8")

    def add(self) -> None:
        self.made += 1
        source = self.rng.choice(self.files())
        text = source.read_text(encoding="utf-8")
        source.with_name(f"added-{self.made}.md").write_text(
            f"# Added page {self.made}\n\nA page added on night {self.made}.\n\n{text}",
            encoding="utf-8",
        )

    def delete(self) -> None:
        files = self.files()
        if len(files) > 3:
            self.rng.choice(files).unlink()

    def rename(self) -> None:
        path = self.rng.choice(self.files())
        self.made += 1
        path.rename(path.with_name(f"renamed-{self.made}-{path.name}"))

    def restore(self) -> None:
        shutil.rmtree(self.root)
        shutil.copytree(self.backup, self.root)

    def night(self) -> None:
        for _ in range(self.rng.randint(1, 4)):
            self.rng.choice([self.edit, self.edit, self.add, self.delete, self.rename])()


def published(out: Path) -> dict[str, tuple]:
    """chunk_id -> (embed_text, embed_hash) of the published run, read from its file."""
    import pyarrow.parquet as pq

    columns = ["chunk_id", "embed_text", "embed_hash"]  # a file, or a folder of parts
    chunks = pl.from_arrow(pq.read_table(runstore.resolve(out) / "chunks.parquet", columns=columns))
    rows = chunks.select(columns).iter_rows()
    return {cid: (text, h) for cid, text, h in rows}


def lance_rows(path: Path, table: str = "chunks") -> list[tuple]:
    """(chunk_id, embed_text, embed_hash, vector) of every row, read with LanceDB."""
    import lancedb

    db = lancedb.connect(str(path))
    found = (
        db.open_table(table)
        .to_arrow()
        .select(["chunk_id", "embed_text", "embed_hash", "vector"])
        .to_pylist()
    )
    return [(r["chunk_id"], r["embed_text"], r["embed_hash"], tuple(r["vector"])) for r in found]


def pg_rows(url: str, table: str = "chunks") -> list[tuple]:
    """The same, read with psycopg (the vector as PostgreSQL's text of it)."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            f'SELECT chunk_id, embed_text, embed_hash, vector::text FROM "{table}"'
        ).fetchall()
    import numpy as np

    def floats(v: str) -> tuple:  # PostgreSQL prints a float4 so that it reads back exactly
        return tuple(float(np.float32(x)) for x in v.strip("[]").split(","))

    return [(cid, text, h, floats(v)) for cid, text, h, v in rows]


def assert_exact(rows: list[tuple], out: Path) -> None:
    """The store's rows are the published chunks, once each, each vector a fresh embedding
    of its embed_text."""
    want = published(out)
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), "a chunk id is stored twice"
    assert set(ids) == set(want), (
        f"{len(set(want) - set(ids))} missing, {len(set(ids) - set(want))} extra"
    )
    for cid, text, h, vec in rows:
        assert (text, h) == want[cid]
        assert vec == tuple(float(x) for x in vector(text)), f"{cid}: not its text's vector"


def embedded(log: Path) -> list[str]:
    """The hashes of every text sent to the fake embedder, in order."""
    return log.read_text().split() if log.exists() else []
