"""What a consumer of an output folder applies: the change set from the run it applied last
to the published run, typed (``chunkmill.changes``): the rows to embed and upsert, the rows
whose other columns changed, the ids to delete, and the run to store once all of it is
applied."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

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
