"""Delivery into vector stores (``chunkmill sync``): the published run of an output folder
made exactly the content of a store's table, each distinct text embedded once per embedder.

    syncing     the sync itself, verify and repair: what to write, in which order
    rows_diff   how a table differs from the published run, row by row (verify)
    columns     the row a store holds for a chunk
    embedders   the embedding models (an ONNX folder, the bundled MiniLM, a Python callable)
    endpoint    an OpenAI-compatible embeddings endpoint
    cache       every vector ever returned, by (embedder id, embed_hash), under OUT
    stores      the store interface, opened from a URL
    lancedb_store, pg_store   LanceDB and PostgreSQL with pgvector
"""
