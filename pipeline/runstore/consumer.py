"""What a consumer of an output folder applies: the change set from the run it applied last
to the published run, typed (``chunkmill.changes``): the rows to embed and upsert, the rows
whose other columns changed, the ids to delete, and the run to store once all of it is
applied."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline.runstore.parquet_files import write_atomic

# The footer keys of a change set's table naming its two runs (``chunkmill changes
# --format parquet`` writes them). The mdchunk.* keys are written too, for consumers that
# read them before.
SINCE, UNTIL = "chunkmill.since", "chunkmill.until"
EARLIER_KEYS = {SINCE: "mdchunk.since", UNTIL: "mdchunk.until"}


def named(table: pa.Table, since: str, until: str) -> pa.Table:
    """``table`` with its footer naming both runs (``since`` empty: a snapshot)."""
    runs = {SINCE: since, UNTIL: until}
    return table.replace_schema_metadata(runs | {EARLIER_KEYS[k]: v for k, v in runs.items()})


@dataclass(frozen=True)
class Changes:
    """The change set from run ``since`` (None: nothing applied yet, every published chunk is
    an add) to the published run ``until``. ``table`` holds every op as ``chunkmill changes``
    writes it (schema ``schemas.CHANGES``, op first); ``adds`` and ``updates`` are its rows
    of those ops without the op (the chunk columns), ``removes`` the ids to delete. Apply
    all of them (each is idempotent), then store ``until`` and pass it as ``since`` next
    time."""

    since: str | None
    until: str
    table: pa.Table

    @classmethod
    def of(cls, table: pa.Table) -> Changes:
        meta = table.schema.metadata or {}
        since = meta.get(SINCE.encode(), b"").decode()
        return cls(since or None, meta[UNTIL.encode()].decode(), table)

    def _op(self, op: str) -> pa.Table:
        rows = self.table.filter(pc.equal(self.table["op"], op))
        return rows.drop_columns(["op"]).replace_schema_metadata(None)

    @cached_property
    def adds(self) -> pa.Table:
        return self._op("add")

    @cached_property
    def updates(self) -> pa.Table:
        return self._op("update")

    @cached_property
    def removes(self) -> list[str]:
        return self._op("remove")["chunk_id"].to_pylist()

    def __bool__(self) -> bool:
        """Whether there is anything to apply."""
        return self.table.num_rows > 0

    def __repr__(self) -> str:
        return (
            f"Changes(since={self.since!r}, until={self.until!r}, adds={self.adds.num_rows}, "
            f"updates={self.updates.num_rows}, removes={len(self.removes)})"
        )


class Cursor:
    """A consumer's cursor file (``chunkmill changes --cursor FILE``): FILE holds the run it
    applied last (no FILE: nothing applied yet); FILE.pending the run the change set it was
    given last brings it to, which ``--applied`` moves into FILE once the consumer has
    applied that change set. Asking again before that gives the same change set again (a
    consumer that crashed applies it again: every op is idempotent). Both are written
    whole or not at all."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.pending = self.path.with_name(self.path.name + ".pending")

    def applied(self) -> str | None:
        """The run applied last, or None."""
        return _read(self.path)

    def offer(self, until: str) -> None:
        """A change set that brings the consumer to ``until`` was handed out."""
        write_atomic(self.pending, (until + "\n").encode())

    def advance(self) -> str:
        """The change set handed out last is applied: FILE names its run (returned).
        ValueError when none was handed out since the last advance."""
        until = _read(self.pending)
        if until is None:
            raise ValueError(
                f"{self.pending}: no change set is waiting to be applied (ask with --cursor "
                f"{self.path} first)"
            )
        write_atomic(self.path, (until + "\n").encode())
        self.pending.unlink()
        return until


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the cursor: {exc}") from exc
    if not text or len(text.splitlines()) != 1:
        raise ValueError(f"{path}: a cursor file holds one run id, found {text[:60]!r}")
    return text
