"""`chunkmill sync`: what it costs, and what the usual indexing loop pays for the same nights.

    .venv/bin/python benchmarks/sync.py [--nights 20]

- speed: a cold `chunkmill run` of all shared corpora (whole process, 2 workers), then the
  first `chunkmill sync` of its published run into LanceDB with a zero-cost embedder (every
  vector zeros: what the sync itself costs), then an unchanged sync (best of three); whole
  processes, start-up included. The sync should take no more than the run, the unchanged
  one under a second.
- minilm: texts per second of the bundled all-MiniLM-L6-v2 (ONNX) on this machine's cores,
  over 1,024 chunk texts of rust_book packed at 256 MiniLM tokens, in the sync's batches.
- endpoint: texts per second of the ``openai:`` embedder against the tests' local server
  (tests/embeddings_server.py, the fake model: what the client and its 8 requests in flight
  cost, not a model).
- nights: N randomised nights over rust_book (edits, adds, deletes, renames, a restore
  from a backup), each one synced by chunkmill, and indexed with LangChain's indexing API
  (``index(..., cleanup="incremental")``, its SQLRecordManager in SQLite, the same
  chunks as documents, source = path) into its InMemoryVectorStore: the texts each sent
  to the embedder, and whether each store ends holding exactly the published chunks.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.nightly import CORPORA  # noqa: E402
from benchmarks.speed import CHUNKMILL, compile_package, timed  # noqa: E402

WORKERS = 2
ZERO = "python:benchmarks.zero_embedder:zero"


def _sync_process(out: Path, store: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    cmd = [str(CHUNKMILL), "sync", str(out), "--to", store, "--embedder", ZERO, "--quiet"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def speed() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out, store = Path(tmp) / "out", f"lancedb://{tmp}/lance"
        cold = timed(CHUNKMILL, CORPORA, out, WORKERS)
        first = _sync_process(out, store)
        unchanged = min(_sync_process(out, store) for _ in range(3))
        import pyarrow.parquet as pq

        chunks = pq.read_table(out / "published" / "chunks.parquet", columns=["chunk_id"])
        chunks = chunks.num_rows  # a file, or a folder of parts
    return {
        "chunks": chunks,
        "cold_run_s": round(cold, 2),
        "first_sync_s": round(first, 2),
        "first_sync_share_of_run": round(first / cold, 3),
        "unchanged_sync_s": round(unchanged, 3),
    }


def minilm(n: int = 1024) -> dict:
    from chunkmill import Policy
    from chunkmill import run as api_run
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline.sync import embedders, syncing

    with tempfile.TemporaryDirectory() as tmp:
        fits = Policy.load(tokenizer="embedder:minilm", max_tokens=256)
        api_run([str(CORPORA / "rust_book")], tmp, policy=fits, log=RunLog(quiet=True))
        texts = syncing.published(tmp).adds["embed_text"].to_pylist()[:n]
    model = embedders.named("minilm")
    model.embed(texts[:8])  # the session loaded
    texts.sort(key=len)  # as the sync batches them
    start = time.perf_counter()
    for i in range(0, len(texts), model.batch_size):
        model.embed(texts[i : i + model.batch_size])
    seconds = time.perf_counter() - start
    return {
        "texts": len(texts),
        "seconds": round(seconds, 2),
        "texts_per_s": round(len(texts) / seconds, 1),
        "threads": os.cpu_count(),
    }


def endpoint_speed(n: int = 20_000) -> dict:
    from chunkmill.pipeline.sync import embedders
    from tests.embeddings_server import EmbeddingsServer

    texts = [f"text number {i} " * 20 for i in range(n)]
    with EmbeddingsServer() as server:
        model = embedders.named(f"openai:fake@{server.url}", in_flight=8, batch_size=1024)
        start = time.perf_counter()
        for i in range(0, n, model.batch_size):
            model.embed(texts[i : i + model.batch_size])
        seconds = time.perf_counter() - start
    return {
        "texts": n,
        "in_flight": 8,
        "batch": 1024,
        "seconds": round(seconds, 2),
        "texts_per_s": round(n / seconds, 1),
    }


def nights(count: int, seed: int = 35) -> dict:
    from chunkmill import Policy
    from chunkmill import run as api_run
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline.sync import embedders, syncing
    from tests.sync_nights import Nights, assert_exact, embedded, lance_rows, published

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "embedded.log"
        os.environ["CHUNKMILL_TEST_EMBED_LOG"] = str(log)
        src, out = tmp / "src", tmp / "out"
        corpus = Nights(CORPORA / "rust_book", src, random.Random(seed))
        chain = _LangChain(tmp / "records.sqlite")
        ours_exact = theirs_exact = 0
        for night in range(count):
            if night == count // 2:
                corpus.restore()
            elif night:
                corpus.night()
            api_run(
                [str(src)],
                out,
                policy=Policy(),
                workers=WORKERS,
                log=RunLog(quiet=True),
                allow_mass_delete=True,
            )
            syncing.sync(
                out,
                f"lancedb://{tmp / 'lance'}",
                embedders.named("python:tests.sync_embedder:embed"),
            )
            try:
                assert_exact(lance_rows(tmp / "lance"), out)
                ours_exact += 1
            except AssertionError:
                pass
            chunks = syncing.published(out).adds
            chain.index(chunks)
            want = Counter(zip(chunks["path"].to_pylist(), chunks["embed_text"].to_pylist()))
            theirs_exact += chain.held() == want
        distinct = len({h for _, h in published(out).values()})
        del os.environ["CHUNKMILL_TEST_EMBED_LOG"]
        return {
            "nights": count,
            "published_chunks_last": sum(1 for _ in published(out)),
            "distinct_texts_last": distinct,
            "chunkmill_texts_embedded": len(embedded(log)),
            "chunkmill_exact_nights": ours_exact,
            "langchain_texts_embedded": chain.embedded,
            "langchain_exact_nights": theirs_exact,
        }


class _LangChain:
    """LangChain's indexing API as its documentation sets it up for incremental loads."""

    def __init__(self, db: Path):
        import warnings

        from langchain_classic.indexes import SQLRecordManager
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore

        from tests.sync_embedder import vector

        outer = self

        class Counting(Embeddings):
            def embed_documents(self, texts):
                outer.embedded += len(texts)
                return [vector(t).tolist() for t in texts]

            def embed_query(self, text):
                return vector(text).tolist()

        self.embedded = 0
        self.store = InMemoryVectorStore(Counting())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.records = SQLRecordManager("chunks", db_url=f"sqlite:///{db}")
            self.records.create_schema()

    def index(self, chunks) -> None:
        from langchain_core.documents import Document
        from langchain_core.indexing import index

        docs = [
            Document(page_content=t, metadata={"source": p})
            for t, p in zip(chunks["embed_text"].to_pylist(), chunks["path"].to_pylist())
        ]
        index(
            docs,
            self.records,
            self.store,
            cleanup="incremental",
            source_id_key="source",
            key_encoder="sha256",
        )

    def held(self) -> Counter:
        return Counter((d["metadata"]["source"], d["text"]) for d in self.store.store.values())


def main(argv: list[str] | None = None) -> dict:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--nights", type=int, default=20)
    opts = args.parse_args(argv)
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} is absent")
        return {"skipped": f"{CORPORA} is absent"}
    compile_package()
    found = {"speed": speed(), "minilm": minilm(), "endpoint": endpoint_speed()}
    found["nights"] = nights(opts.nights)
    for name, figures in found.items():
        print(name, figures)
    return found


if __name__ == "__main__":
    main()
