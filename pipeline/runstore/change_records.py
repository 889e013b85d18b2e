"""The change set as JSON records (``chunkmill changes --format jsonl``, ``change_records``).

A record is a row of the change set (schemas.CHANGES) with two differences:

- ``front_matter`` is a JSON object. The chunks table stores every value as text: strings
  as they are, dates and times as ISO 8601, everything else (lists, mappings, numbers,
  booleans, null) as canonical JSON. Text alone cannot tell ``version: "1.0"`` (a string)
  from ``version: 1.0`` (a number), so the record does not guess from the text: it reads
  the document's front matter again from the published run's ``documents.parquet`` and
  decodes a value only when the value written there is not a string, date or time and its
  JSON is exactly the stored text. Everything else stays the stored text, so do the
  columns of an input table (the table is not kept, so their types are not known), and all
  values when the run's policy keeps front matter out of the column.
- ``next_since``: the run the change set brings a consumer to (the Parquet footer's
  ``chunkmill.until``), in every record, to store once everything is applied and give as
  ``--since`` next time. No record means nothing to apply: keep the run you have.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline import frontmatter, runstore
from chunkmill.pipeline.runstore import ledger, manifest
from chunkmill.pipeline.runstore.consumer import Changes

NEXT = "next_since"


def records(out: str | Path, since: str | None, updates: bool = False) -> list[dict]:
    """The change set from run ``since`` (None: every published chunk) to the published
    run of ``out``, as JSON records."""
    run = ledger.published_run(out)
    return records_of(ledger.changes_of(out, run, since, updates), run[0])


def records_of(table: pa.Table, folder: Path) -> list[dict]:
    """The records of a change set ``table`` whose adds and updates come from the
    published run folder ``folder``."""
    until = Changes.of(table).until
    written = _written_values(folder, table)
    rows = table.to_pylist()
    for row in rows:
        pairs, values = row["front_matter"], written.get(row["doc_id"], {})
        if pairs is not None:
            row["front_matter"] = {
                k: frontmatter.decoded(v, values[k]) if k in values else v for k, v in pairs
            }
        row[NEXT] = until
    return rows


def _written_values(folder: Path, table: pa.Table) -> dict[str, dict[str, object]]:
    """doc_id -> its front matter values as written, for the documents of ``table`` whose
    chunks hold them (none when the policy keeps front matter out of the column)."""
    import pyarrow.compute as pc

    from chunkmill.pipeline.runstore import parquet_files

    try:
        policy = manifest.load(folder).get("policy") or {}
    except manifest.ManifestError:
        return {}
    if policy.get("front_matter", "metadata") != "metadata":
        return {}
    holding = pc.invert(pc.is_null(table["front_matter"]))
    ids = pc.unique(table["doc_id"].filter(holding))
    if not len(ids):
        return {}
    runstore.check_served(folder, ["documents.parquet"])
    docs = parquet_files.read(folder, "documents", ["doc_id", "text", "front_matter_format"])
    wanted = pc.and_(
        pc.is_in(docs["doc_id"], value_set=ids), pc.is_valid(docs["front_matter_format"])
    )
    docs = docs.filter(wanted)
    found = {}
    for doc_id, text in zip(docs["doc_id"].to_pylist(), docs["text"].to_pylist()):
        found[doc_id] = frontmatter.values(text) or {}
    return found
