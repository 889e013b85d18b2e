"""chunkmill.pipeline: the library, as pure stages over Arrow tables, and what they need.

The stages, each a function from tables to tables, with no I/O:

    document   raw bytes -> documents (+ rejects): decoding, front matter (frontmatter,
               safe_yaml)
    block      documents -> blocks: the Rust core's parse, or markdown-it-py (parse,
               parse_markdown_it, mdx, fence, block_kinds), with the token estimate
               (bulk_estimate)
    chunk      blocks -> chunks: sections, splits, packing, context headers and ids in the
               Rust core (context, heading hold their Python callers)
    postings   chunks -> search terms
    batch      every stage over one batch of documents, as a run's workers call it

Around them: policy (the one policy dataclass), tokens (the token counters: the estimate,
whose classes and weights are token_estimate's, and real tokenizers, cl100k and o200k
counted in the core; han_rare), schemas (every table's schema, declared
once; table_names: which tables a run writes), arrow_columns (Arrow columns without
pandas), doc_limits; inputs:
sources (listing), reading (safe reads), table_rows (Parquet/JSONL rows, parquet_pages:
the page sizes a Parquet file declares), input_labels, objectstore (s3:// in and out);
the run store (``runstore``: every file of an output folder); delivery into vector
stores (``sync``: chunkmill sync); queries (DuckDB over a run); the report: report,
charts, charts_detail, charts_tokens, report_page, report_style, package_versions.
"""
