"""chunkmill: markdown corpora to retrieval-ready chunks.

The library is a set of small stages, each a pure function from an Arrow
table to an Arrow table:

    document  bytes -> documents (+ rejects)
    block     documents -> blocks
    chunk     blocks -> chunks

Reading and writing files lives in ``pipeline.sources`` and ``pipeline.store``;
the jobs in ``jobs/`` string stages together.
"""
