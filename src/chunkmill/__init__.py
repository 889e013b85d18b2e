"""chunkmill: markdown corpora to retrieval-ready chunks.

The public API (the ``chunkmill`` command is a thin layer over it)::

    from chunkmill import Policy, chunk_text, chunk_texts, chunk_table, run, connect, search, stats

    chunks = chunk_text("# Install\\n\\nRun the installer.", max_tokens=512)
    table = chunk_texts(texts, max_tokens=512)  # many documents on every core: a table
    summary = run(["docs/"], "out/")          # the nightly run, as `chunkmill run`
    hits = search("out/", "install linux")    # BM25 over the published run

The pipeline's stages live in ``chunkmill.pipeline`` (pure table -> table functions), the jobs
that read, dispatch and write in ``chunkmill.jobs``, the SQL in ``chunkmill.sql``.

Names are imported on first use, so ``import chunkmill`` (and ``chunkmill --help``) stays fast:
polars, pyarrow and duckdb load only when a function needs them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# An editable install is a tree of links to the source files under build/ (pyproject.toml,
# tool.distutils.editable_wheel), and setuptools-rust builds the compiled core beside the
# real file of this one, src/chunkmill/_core*.so, which that tree does not link: the real
# folder is searched after the tree's. In a regular install both are the same folder.
_source = os.path.dirname(os.path.realpath(__file__))
if _source not in __path__:
    __path__.append(_source)
del _source

__all__ = [
    "Changes",
    "Chunk",
    "InputError",
    "LedgerError",
    "Policy",
    "PolicyError",
    "Refused",
    "RejectedError",
    "RunOptions",
    "RunSummary",
    "StoreDiff",
    "SyncRefused",
    "SyncSummary",
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
    "sync",
]

_HOMES = {
    "Chunk": "chunkmill.chunking",  # documents in memory into chunks
    "RejectedError": "chunkmill.chunking",
    "chunk_table": "chunkmill.chunking",
    "chunk_text": "chunkmill.chunking",
    "chunk_texts": "chunkmill.chunking",
    "Changes": "chunkmill.pipeline.runstore.consumer",  # what changes() returns
    "InputError": "chunkmill.pipeline.inputs.reading",  # an INPUT that cannot be read as asked
    # changes(): a run the ledger does not know
    "LedgerError": "chunkmill.pipeline.runstore.ledger",
    "Policy": "chunkmill.pipeline.policy",
    "PolicyError": "chunkmill.pipeline.policy",
    "RunOptions": "chunkmill.jobs.options",  # run()'s options, each with its help
    "RunSummary": "chunkmill.jobs.run_job",
    "Refused": "chunkmill.pipeline.runstore.guards",
    "StoreDiff": "chunkmill.pipeline.sync.syncing",  # sync(verify=True) returns one
    "SyncRefused": "chunkmill.pipeline.sync.syncing",  # sync() refused before any write
    "SyncSummary": "chunkmill.pipeline.sync.syncing",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from chunkmill.api import (
        change_records,
        changes,
        connect,
        report,
        run,
        search,
        stats,
        sync,
    )
    from chunkmill.chunking import Chunk, RejectedError, chunk_table, chunk_text, chunk_texts
    from chunkmill.jobs.options import RunOptions
    from chunkmill.jobs.run_job import RunSummary
    from chunkmill.pipeline.inputs.reading import InputError
    from chunkmill.pipeline.policy import Policy, PolicyError
    from chunkmill.pipeline.runstore.guards import Refused
    from chunkmill.pipeline.runstore.ledger import LedgerError
    from chunkmill.pipeline.sync.syncing import StoreDiff, SyncRefused, SyncSummary


def __getattr__(name: str):
    if name == "__version__":
        from importlib.metadata import version

        return version("chunkmill")
    if name not in __all__:
        raise AttributeError(f"module 'chunkmill' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOMES.get(name, "chunkmill.api")), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
