"""``chunkmill sync``: the published run of an output folder into a vector store."""

from __future__ import annotations

import json
import sys
import time

import click

from chunkmill.jobs import errors
from chunkmill.jobs.cli.consumer import _folder_or_uri


@click.command("sync")
@click.argument("out", metavar="DIR", callback=_folder_or_uri)
@click.option(
    "--to",
    "store",
    required=True,
    metavar="STORE",
    help="lancedb://PATH (PATH a folder or an object-store URL) or "
    "postgresql://USER:PASSWORD@HOST:PORT/DATABASE (pgvector).",
)
@click.option(
    "--embedder",
    "spec",
    default="minilm",
    show_default=True,
    metavar="SPEC",
    help="minilm (all-MiniLM-L6-v2, bundled by the embed extra), onnx:FOLDER, "
    "openai:MODEL[@BASE_URL] (key from OPENAI_API_KEY) or python:MODULE:FUNCTION.",
)
@click.option("--table", default="chunks", show_default=True, help="The table in STORE.")
@click.option(
    "--columns",
    metavar="LIST",
    help="Chunk columns stored beside chunk_id, vector, embed_hash and embedder: "
    "'default' (text, embed_text, doc_id, path, title, breadcrumb, section_title, anchor, "
    "url, offsets, lines, front_matter), 'all', or a comma-separated list.",
)
@click.option(
    "--prefix",
    default="",
    metavar="TEXT",
    help="Put before every text the model embeds (e5 models want 'passage: ').",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False),
    help="The embedding cache folder (default: DIR/embeddings).",
)
@click.option(
    "--embed-tokenizer",
    metavar="SPEC",
    help="Count the model's input with this counter (hf:PATH, cl100k_base) instead of the "
    "one the embedder knows (an endpoint serving another model).",
)
@click.option(
    "--embed-max-tokens",
    type=click.IntRange(min=1),
    metavar="N",
    help="The model's input limit (default: what the embedder knows; none: not checked).",
)
@click.option("--batch-size", type=click.IntRange(min=1), help="Texts per embedding call.")
@click.option(
    "--in-flight",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="openai: requests at once.",
)
@click.option(
    "--verify", is_flag=True, help="Compare STORE with the published run; change nothing."
)
@click.option(
    "--repair",
    is_flag=True,
    help="Compare row by row and put right every missing, stale or extra row.",
)
@click.option(
    "--reembed",
    is_flag=True,
    help="Rebuild the table with this embedder (one that holds another's vectors): every "
    "text embedded first, then the table replaced in one write.",
)
@click.option(
    "--fts",
    is_flag=True,
    help="Also a full-text index on text, for the store's own keyword and hybrid search "
    "(LanceDB: its FTS index; PostgreSQL: a GIN index on to_tsvector('simple', text)).",
)
@click.option("--json", "as_json", is_flag=True, help="The summary as one JSON object on stdout.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def sync_cmd(
    out,
    store,
    spec,
    table,
    columns,
    prefix,
    cache,
    embed_tokenizer,
    embed_max_tokens,
    batch_size,
    in_flight,
    verify,
    repair,
    reembed,
    fts,
    as_json,
    quiet,
):
    """Bring a table of STORE to exactly the published run of DIR, embedding each distinct
    text once per embedder, ever.

    \b
    Examples:
      chunkmill sync out/ --to lancedb://store                     # bundled MiniLM
      chunkmill sync out/ --to postgresql://me@db:5432/rag --embedder openai:text-embedding-3-small
      chunkmill sync out/ --to lancedb://store --verify           # exact? (changes nothing)
      chunkmill sync out/ --to lancedb://store --embedder onnx:my-model --reembed

    The first sync writes every published chunk; each later one applies what changed since
    the run the table holds (missed nights included); run twice, the second does nothing.
    Every vector the embedder returns goes to the embedding cache (DIR/embeddings) before
    the store is touched: a killed sync loses nothing it paid for, and a text embedded
    once is never embedded again by that embedder, whatever store or policy asks for it.
    Chunks longer than the model reads are refused before any call, naming the policy that
    fits. Exit 2 for a bad argument, 3 when another sync holds the store, 4 when the sync is
    refused (another embedder's table, chunks over the model's limit), 5 after --verify
    found differences, 1 for anything else (an unreachable server, an endpoint that keeps
    failing). The embedding cache is folded when it has many files, keeping the vectors of
    the runs still on disk and of the last 30 days.
    """
    from chunkmill.pipeline.sync import columns as store_columns
    from chunkmill.pipeline.sync import embedders, endpoint, syncing
    from chunkmill.pipeline.sync.stores import StoreBusy, StoreError, StoreUrlError

    if verify + repair + reembed > 1:
        raise click.UsageError("give one of --verify, --repair and --reembed")
    try:
        chosen = store_columns.choose(columns)
        embedder = embedders.named(
            spec,
            prefix=prefix,
            tokenizer=embed_tokenizer,
            max_tokens=embed_max_tokens,
            batch_size=batch_size,
            in_flight=in_flight,
        )
    except (ValueError, embedders.EmbedderError) as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        if verify:
            found = syncing.verify(out, store, embedder, table=table, columns=chosen, cache=cache)
            return _verified(store, table, found, as_json)
        summary = syncing.sync(
            out,
            store,
            embedder,
            table=table,
            columns=chosen,
            cache=cache,
            repair=repair,
            reembed=reembed,
            fts=fts,
            progress=None if quiet else Progress(),
        )
    except StoreUrlError as exc:
        raise click.UsageError(str(exc)) from exc
    except StoreBusy as exc:
        errors.finish("sync", f"refused: {exc}", 3, status="refused")
    except syncing.Refused as exc:
        errors.finish("sync", f"refused: {exc}", exc.code, status="refused")
    except (StoreError, embedders.EmbedderError, endpoint.EndpointError, ValueError) as exc:
        errors.finish("sync", str(exc), 1)
    if as_json:
        click.echo(json.dumps(summary.as_dict()))
    click.echo(f"chunkmill sync: {summary.line()}", err=True)


def _verified(url: str, table: str, found, as_json: bool) -> None:
    from chunkmill.pipeline.sync.stores import shown

    store = shown(url)
    if as_json:
        click.echo(json.dumps({"store": store, "table": table, **found.as_dict()}))
    counts = found.as_dict()
    if not found:
        click.echo(f"chunkmill sync: {store} table {table} is exact", err=True)
        return
    parts = [f"{counts[k]} {k}" for k in ("missing", "stale", "extra") if counts[k]]
    if found.state:
        parts.append(found.state)
    if found.layout:
        parts.append(found.layout)
    click.echo(
        f"chunkmill sync: {store} table {table} differs from the published run: "
        + "; ".join(parts)
        + " (--repair puts it right)",
        err=True,
    )
    sys.exit(5)


class Progress:
    """One line per stage on stderr, and one every few seconds while it lasts."""

    def __init__(self, every: float = 5.0):
        self.every, self.last = every, 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done in (0, total) or now - self.last >= self.every:
            self.last = now
            what = "texts embedded" if stage == "embed" else "rows written"
            click.echo(f"chunkmill sync: {done:,}/{total:,} {what}", err=True)


COMMANDS = [sync_cmd]
