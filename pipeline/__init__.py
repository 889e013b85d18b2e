"""chunkmill.pipeline: the library, as pure stages over Arrow tables, and what they need.

The stages, each a function from tables to tables, with no I/O:

    document   raw bytes -> documents (+ rejects): decoding, front matter (frontmatter,
               safe_yaml)
    block      documents -> blocks: the Rust core's parse, or markdown-it-py (parse,
               parse_markdown_it, mdx, fence), with the token estimate
               (bulk_estimate)
    chunk      blocks -> chunks: sections, splits, packing, context headers and ids in the
               Rust core (context, heading hold their Python callers; core_columns: the
               block columns into the core and its chunk columns out, in bulk)
    postings   chunks -> search terms
    batch      every stage over one batch of documents, as a run's workers call it
               (batching: how documents are cut into batches and parts; doc_rows: a
               stored table's rows by document)

Around them: policy (the one policy dataclass), tokens (the token counters: the estimate,
whose classes and weights are token_estimate's, and real tokenizers, cl100k and o200k
counted in the core; han_rare), schemas (every table's schema, declared
once; table_names: which tables a run writes), arrow_columns (Arrow columns without
pandas), doc_limits, package_versions; queries (DuckDB over a run). The folders:

    inputs    a run's INPUT into raw documents (``inputs``: listing, safe reads, tables)
    runstore  every file of an output folder, local or in an object store
    sync      delivery into vector stores (chunkmill sync)
    report    the chunk-quality report
"""
