"""``chunkmill search``: BM25 over the published chunks (sql/search.sql), or with
``--store`` the nearest vectors in a store written by ``chunkmill sync``."""

from __future__ import annotations

import json
import textwrap

import click

from chunkmill.jobs.cli.query import OUT_DIR, _jsonable, _open


@click.command("search")
@OUT_DIR
@click.argument("query")
@click.option(
    "--section",
    help="Only chunks whose breadcrumb or headings contain TEXT (case-insensitive).",
    metavar="TEXT",
)
@click.option(
    "--level",
    type=click.IntRange(1, 6),
    help="Only chunks of sections opened by a heading of this level.",
)
@click.option(
    "--type",
    "chunk_type",
    type=click.Choice(["section", "preamble", "text", "image"]),
    help="Only chunks of this type.",
)
@click.option(
    "--path",
    "path_glob",
    metavar="GLOB",
    help="Only documents whose path matches GLOB, e.g. 'guides/*'.",
)
@click.option(
    "--meta", metavar="KEY=VALUE", help="Only documents whose front matter has KEY equal to VALUE."
)
@click.option("--limit", "-k", default=10, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--full",
    is_flag=True,
    help="Print each hit's whole text, not a snippet around its first match.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON array (whole texts), for machines.")
@click.option(
    "--store",
    metavar="STORE",
    help="Instead of BM25: the nearest vectors in STORE (written by `chunkmill sync`), the "
    "query embedded by --embedder.",
)
@click.option(
    "--embedder",
    default="minilm",
    show_default=True,
    metavar="SPEC",
    help="With --store: the embedder the store was synced with.",
)
@click.option("--store-table", default="chunks", show_default=True, help="With --store.")
@click.option("--prefix", default="", metavar="TEXT", help="With --store: the sync's --prefix.")
@click.option(
    "--query-prefix",
    default="",
    metavar="TEXT",
    help="With --store: put before the query (e5 models want 'query: ').",
)
def search_cmd(
    out,
    query,
    section,
    level,
    chunk_type,
    path_glob,
    meta,
    limit,
    full,
    as_json,
    store,
    embedder,
    store_table,
    prefix,
    query_prefix,
):
    """Keyword search over the chunks of DIR, ranked by BM25 (k1 1.2, b 0.75). Each hit is
    printed with a snippet of a few lines around its first match (--full: the whole text).

    \b
    Example:
      chunkmill search out/ "configure the compactor" --section config

    Runs sql/search.sql on the postings table written next to the chunks (made in memory
    from the chunks when the run did not write it: `chunkmill run --table postings`); no
    DuckDB extension is needed. The files are checked against the run's manifest first; a
    damaged one is refused (exit 1).
    """
    from chunkmill import api

    if store:
        if section or level or chunk_type or path_glob or meta:
            raise click.UsageError(
                "--section, --level, --type, --path and --meta filter BM25 search; with "
                "--store only --limit, --full and --json"
            )
        hits = _nearest(store, embedder, store_table, prefix, query_prefix, query, limit)
        return _print_hits(hits, query, full, as_json)
    fm_key, fm_value = (meta.split("=", 1) + [None])[:2] if meta else (None, None)
    if meta and fm_value is None:
        raise click.BadParameter("use KEY=VALUE", param_hint="--meta")
    hits = _open(
        api.search,
        out,
        query,
        section=section,
        level=level,
        chunk_type=chunk_type,
        path=path_glob,
        fm_key=fm_key,
        fm_value=fm_value,
        limit=limit,
    )
    _print_hits(hits, query, full, as_json)


def _nearest(store, spec, table, prefix, query_prefix, query, limit):
    """The store's nearest rows as a polars frame of hits (rank, score, the row's columns)."""
    import polars as pl

    from chunkmill.jobs import errors
    from chunkmill.pipeline.sync import embedders, syncing
    from chunkmill.pipeline.sync.stores import StoreError, StoreUrlError

    try:
        embedder = embedders.named(spec, prefix=prefix)
        rows = syncing.nearest(
            store, embedder, query, table=table, limit=limit, query_prefix=query_prefix
        )
    except (StoreUrlError, embedders.EmbedderError) as exc:
        raise click.UsageError(str(exc)) from exc
    except syncing.Refused as exc:
        errors.finish("search", f"refused: {exc}", exc.code, status="refused")
    except StoreError as exc:
        errors.finish("search", str(exc), 1)
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        if isinstance(row.get("front_matter"), list):
            row["front_matter"] = dict(row["front_matter"])
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def _print_hits(hits, query: str, full: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_jsonable(hits), indent=1, ensure_ascii=False))
        return
    if hits.is_empty():
        click.echo("no match", err=True)
        return
    for k, h in enumerate(hits.iter_rows(named=True)):
        shown = ("breadcrumb", "path", "line_start", "line_end", "url", "anchor")
        h = {**dict.fromkeys(shown, ""), "breadcrumb": [], "text": h.get("embed_text", ""), **h}
        crumb = " > ".join(h["breadcrumb"]) or "(no heading)"
        click.echo(
            ("\n" if k else "")
            + f"{h['rank']:>3}. {h['score']:7.3f}  {h['path']}:{h['line_start']}-"
            f"{h['line_end']}  {crumb}"
        )
        link = h["url"] or (f"#{h['anchor']}" if h["anchor"] else None)
        if link:
            click.echo(f"       {link}")
        text = h["text"].strip("\n") if full else snippet(h["text"], query)
        click.echo(textwrap.indent(text, "       "))


SNIPPET_LINES, SNIPPET_WIDTH = 3, 100


def snippet(text: str, query: str) -> str:
    """A few lines of ``text`` from the line before the first one holding a word of
    ``query`` (else from the start), each cut to a width; "…" marks what is left out."""
    import re

    words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 1]
    lines = [line for line in text.strip("\n").splitlines() if line.strip()]
    hit = next((i for i, line in enumerate(lines) if any(w in line.lower() for w in words)), 0)
    start = max(hit - 1, 0)
    shown = lines[start : start + SNIPPET_LINES]
    cut = [
        line if len(line) <= SNIPPET_WIDTH else line[: SNIPPET_WIDTH - 1] + "…" for line in shown
    ]
    if start > 0:
        cut[0] = "… " + cut[0]
    if start + SNIPPET_LINES < len(lines):
        cut.append("…")
    return "\n".join(cut)


COMMANDS = [search_cmd]
