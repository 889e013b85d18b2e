"""What a run counts, in one shape: its batches add into it as they are written (with what
their workers counted), and the runs table, the log and the printed summary read from it.
`chunkmill blocks` and `chunkmill chunks` count the same way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa


@dataclass
class RunCounts:
    documents: int = 0  # of the run's output (read, reused or linked)
    blocks: int | None = 0  # None: not counted (a run that does not write them)
    chunks: int = 0
    rejects: Counter = field(default_factory=Counter)  # reason -> documents
    skipped: Counter = field(default_factory=Counter)  # reason -> listing entries not read
    strategies: Counter = field(default_factory=Counter)  # strategy -> chunks
    tokens: list[int] = field(default_factory=list)  # n_tokens of every chunk
    bytes: int = 0  # input bytes read (a run that reuses blocks: read, hashed or stamped)
    parsed: int = 0  # documents parsed by this run
    fallback: int = 0  # of them, parsed by the reference parser (the Rust core gave up)
    repacked: int = 0  # documents packed by this run
    reused: int = 0  # documents whose bytes did not change
    bytes_read: int = 0  # of documents only hashed or stamped (reused), not parsed
    unread: int = 0  # documents reused on their file stamp alone, without reading them
    trusted: int = 0  # file stamps of the published run this run could trust
    stamped: list = field(default_factory=list)  # (path, doc_id, stamp) of local files
    seconds: Counter = field(default_factory=Counter)  # per stage; workers' summed
    wall: float = 0.0  # seconds of the whole command
    limits: dict = field(default_factory=dict)  # reason -> (option, value): pool.Limits

    def add(self, tables: Mapping[str, pa.Table], worker: Mapping | None = None) -> None:
        """One batch's tables (any of documents, blocks, chunks, rejects), and what its
        worker counted (``batch.process``: bytes, parsed, repacked, seconds_parse and
        seconds_chunk)."""
        if "documents" in tables:
            self.documents += tables["documents"].num_rows
        if "blocks" in tables and self.blocks is not None:
            self.blocks += tables["blocks"].num_rows
        if "chunks" in tables:
            chunks = tables["chunks"]
            self.chunks += chunks.num_rows
            self.strategies.update(chunks.column("strategy").to_pylist())
            self.tokens.extend(chunks.column("n_tokens").to_pylist())
        if "rejects" in tables:
            self.rejects.update(tables["rejects"].column("reason").to_pylist())
        if worker:
            self.bytes += worker["bytes"]
            self.parsed += worker["parsed"]
            self.fallback += worker.get("fallback", 0)
            self.repacked += worker["repacked"]
            self.seconds["parse"] += worker["seconds_parse"]
            self.seconds["chunk"] += worker["seconds_chunk"]
            if "seconds_write" in worker:  # a part written by its worker (jobs/part_work.py)
                self.seconds["write_parts"] += worker["seconds_write"]

    def blocks_line(self, out: Path) -> str:
        """The summary line of what was read and parsed."""
        mb = self.bytes / 1e6
        rate = mb / self.wall if self.wall else 0.0
        rej = ", ".join(f"{n} {r}{self._at(r)}" for r, n in sorted(self.rejects.items()))
        skip = sum(self.skipped.values())
        why = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
        return (
            f"{self.documents} documents, "
            f"{'' if self.blocks is None else f'{self.blocks} blocks, '}"
            f"{sum(self.rejects.values())} rejects{f' ({rej})' if rej else ''}, "
            f"{skip} skipped{f' ({why})' if why else ''}, "
            f"{self._fallback_part()}"
            f"{mb:.1f} MB in {self.wall:.2f} s ({rate:.1f} MB/s) -> {out}"
        )

    def _fallback_part(self) -> str:
        """Documents the Rust core left to the reference parser: none, or how many."""
        if not self.fallback:
            return ""
        return f"{self.fallback} parsed by the reference parser (markdown-it-py), "

    def chunks_line(self) -> str:
        """The summary line of what was packed."""
        tokens = sorted(self.tokens or [0])

        def nearest(q: float) -> int:  # the nearest-rank quantile, as polars' "nearest"
            return tokens[int((len(tokens) - 1) * q + 0.5)]

        mix = ", ".join(f"{k} {v}" for k, v in sorted(self.strategies.items()))
        return (
            f"{self.documents} documents, {self.chunks} chunks ({mix or 'none'}), "
            f"tokens p50 {nearest(0.5)} p95 {nearest(0.95)} max {tokens[-1]}, "
            f"{sum(self.rejects.values())} rejects, {self.wall:.2f} s"
        )

    def _at(self, reason: str) -> str:
        """' at --doc-memory 1024 MB' for a reason of a worker's limit, else ''."""
        return " at {} {}".format(*self.limits[reason]) if reason in self.limits else ""
