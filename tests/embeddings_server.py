"""A small OpenAI-compatible embeddings server for the tests: ``POST /v1/embeddings`` answers
with the fake model of tests/sync_embedder.py (so a row can be checked against a fresh
embedding), after the failures queued in ``fail`` (one per request: ``429``, ``500``,
``slow`` (answers after ``slow_seconds``), ``drop`` (closes the connection unanswered)).
It counts requests, texts answered and the most requests it served at once."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.sync_embedder import vector


class EmbeddingsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, key: str | None = None, delay: float = 0.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.key, self.delay = key, delay
        self.fail: list[str] = []
        self.slow_seconds = 2.0
        self.requests = self.answered = self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: EmbeddingsServer

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        server = self.server
        with server.lock:
            server.requests += 1
            server.in_flight += 1
            server.most_in_flight = max(server.most_in_flight, server.in_flight)
            failure = server.fail.pop(0) if server.fail else None
        try:
            self._answer(server, failure)
        finally:
            with server.lock:
                server.in_flight -= 1

    def _answer(self, server: EmbeddingsServer, failure: str | None) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if server.key and self.headers.get("Authorization") != f"Bearer {server.key}":
            return self._send(401, {"error": {"message": "Incorrect API key provided"}})
        if failure == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if failure == "slow":
            time.sleep(server.slow_seconds)
        if failure == "429":
            return self._send(429, {"error": {"message": "Rate limit"}}, {"Retry-After": "0"})
        if failure == "500":
            return self._send(500, {"error": {"message": "internal"}})
        if server.delay:
            time.sleep(server.delay)
        texts = body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": vector(t).tolist()}
            for i, t in reversed(list(enumerate(texts)))  # any order: the index says which
        ]
        with server.lock:
            server.answered += len(texts)
        self._send(200, {"object": "list", "data": data, "model": body["model"]})

    def _send(self, code: int, payload: dict, headers: dict | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)
