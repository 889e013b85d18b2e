"""The names of the tables a run writes, apart from their schemas (pipeline/schemas.py,
which re-exports them): the command line names them without loading pyarrow."""

from __future__ import annotations

# The tables whose content depends only on the input and the policy (not on history).
CONTENT_TABLES = ["documents", "blocks", "chunks", "postings", "rejects"]

# Of them, those a run writes only when asked (``chunkmill run --table``): each is made
# again from the documents or the chunks, which hold everything it says, and the queries
# that read one make it in memory when the run did not write it (pipeline/queries.py).
# Written, they cost a cold run about a sixth of its time (docs/design.md, Decisions).
OPTIONAL_TABLES = ("blocks", "postings")

# The tables whose rows are a document's: written as a folder of parts (``chunks.parquet/``
# holds ``part-000000.parquet``, ...), each part the rows of the same documents in every one
# of them (pipeline/runstore/parquet_files.py). DuckDB, polars and pyarrow read such a folder
# as one table, parts in name order.
PARTITIONED = ("documents", "blocks", "chunks", "postings")


def content_tables(optional=()) -> list[str]:
    """The content tables a run writes with the ``optional`` tables asked for, in order."""
    return [t for t in CONTENT_TABLES if t not in OPTIONAL_TABLES or t in optional]


def partitioned(optional=()) -> list[str]:
    """The partitioned tables a run writes with the ``optional`` tables asked for."""
    return [t for t in PARTITIONED if t not in OPTIONAL_TABLES or t in optional]
