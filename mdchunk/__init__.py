"""mdchunk: markdown corpora to retrieval-ready chunks.

The public API (the ``mdchunk`` command is a thin layer over it)::

    from mdchunk import Policy, chunk_text, chunk_texts, chunk_table, run, connect, search, stats

    chunks = chunk_text("# Install\\n\\nRun the installer.", max_tokens=512)
    table = chunk_texts(texts, max_tokens=512)  # many documents on every core: a table
    summary = run(["docs/"], "out/")          # the nightly run, as `mdchunk run`
    hits = search("out/", "install linux")    # BM25 over the published run

The pipeline's stages live in ``mdchunk.pipeline`` (pure table -> table functions), the jobs
that read, dispatch and write in ``mdchunk.jobs``, the SQL in ``mdchunk.sql``.

Names are imported on first use, so ``import mdchunk`` (and ``mdchunk --help``) stays fast:
polars, pyarrow and duckdb load only when a function needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "Chunk",
    "InputError",
    "LedgerError",
    "Policy",
    "PolicyError",
    "Refused",
    "RejectedError",
    "RunSummary",
    "change_records",
    "changes",
    "chunk_table",
    "chunk_text",
    "chunk_texts",
    "connect",
    "report",
    "run",
    "search",
    "stats",
]

_HOMES = {
    "InputError": "mdchunk.pipeline.reading",  # an INPUT that cannot be read as asked
    "LedgerError": "mdchunk.pipeline.ledger",  # changes(): a run the ledger does not know
    "Policy": "mdchunk.pipeline.policy",
    "PolicyError": "mdchunk.pipeline.policy",
    "RunSummary": "mdchunk.jobs.run_job",
    "Refused": "mdchunk.jobs.guards",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from mdchunk.api import (
        Chunk,
        RejectedError,
        change_records,
        changes,
        chunk_table,
        chunk_text,
        chunk_texts,
        connect,
        report,
        run,
        search,
        stats,
    )
    from mdchunk.jobs.guards import Refused
    from mdchunk.jobs.run_job import RunSummary
    from mdchunk.pipeline.ledger import LedgerError
    from mdchunk.pipeline.policy import Policy, PolicyError
    from mdchunk.pipeline.reading import InputError


def __getattr__(name: str):
    if name == "__version__":
        from importlib.metadata import version

        return version("mdchunk")
    if name not in __all__:
        raise AttributeError(f"module 'mdchunk' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOMES.get(name, "mdchunk.api")), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
