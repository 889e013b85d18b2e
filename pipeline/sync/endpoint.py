"""An OpenAI-compatible embeddings endpoint (``openai:MODEL`` or ``openai:MODEL@BASE_URL``):
OpenAI itself, vLLM, TEI, Ollama, LiteLLM. ``POST BASE_URL/embeddings`` with
``{"model": MODEL, "input": [texts]}``; the key from OPENAI_API_KEY (none: no Authorization
header, as local servers take it), the base URL from the spec, else OPENAI_BASE_URL, else
OpenAI's.

Texts go in batches (``batch_size``), at most ``in_flight`` requests at once. A 429, a 5xx,
a timeout or a dropped connection is retried with exponential backoff (a Retry-After the
server sends is honoured), up to ``ATTEMPTS`` times; any other answer fails the sync with the
server's status and message. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

from chunkmill.pipeline.sync.embedders import Embedder, EmbedderError

DEFAULT_BASE = "https://api.openai.com/v1"
ATTEMPTS = 8
TIMEOUT = 60.0  # seconds for one request
BACKOFF = 0.5  # the first wait; doubled after each failure, at most MAX_WAIT
MAX_WAIT = 30.0
# OpenAI's embedding models read cl100k_base tokens, at most 8191 of them
OPENAI_MODELS = ("text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002")


class EndpointError(Exception):
    """The endpoint refused or kept failing (one line: URL, status, the server's message)."""


def embedder(spec: str, rest: str, in_flight: int = 4) -> Embedder:
    model, _, base = rest.partition("@")
    base = (base or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE).rstrip("/")
    if urlparse(base).scheme not in ("http", "https") or not model:
        raise EmbedderError(f"{spec}: give openai:MODEL or openai:MODEL@http(s)://HOST/v1")
    client = Client(base, model, os.environ.get("OPENAI_API_KEY"), in_flight)
    known = model in OPENAI_MODELS
    return Embedder(
        spec,
        name=f"openai:{model}@{urlparse(base).netloc}",
        dimensions=None,
        normalized=known,  # OpenAI's vectors have length 1; others are taken as they come
        tokenizer="cl100k_base" if known else None,
        max_tokens=8191 if known else None,
        batch_size=128,
        _embed=client,
    )


class Client:
    def __init__(self, base: str, model: str, key: str | None, in_flight: int):
        self.url, self.model, self.key = base + "/embeddings", model, key
        self.in_flight = max(1, in_flight)

    def __call__(self, texts: list[str]):
        """Vectors of ``texts`` in order: split into ``in_flight`` requests sent at once."""
        size = max(1, -(-len(texts) // self.in_flight))
        parts = [texts[i : i + size] for i in range(0, len(texts), size)]
        if len(parts) <= 1:
            return self.request(texts)
        with ThreadPoolExecutor(len(parts)) as pool:
            return [row for rows in pool.map(self.request, parts) for row in rows]

    def request(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        wait = BACKOFF
        for attempt in range(1, ATTEMPTS + 1):
            problem, retry_after = self._try(body, headers, len(texts))
            if isinstance(problem, list):
                return problem
            if retry_after is None or attempt == ATTEMPTS:
                raise EndpointError(f"{self.url}: {problem}")
            time.sleep(min(MAX_WAIT, max(retry_after, wait * (0.5 + random.random()))))
            wait *= 2
        raise AssertionError("unreachable")

    def _try(self, body: bytes, headers: dict, n: int):
        """(vectors, None), or (problem, seconds to wait: None when retrying cannot help)."""
        request = urllib.request.Request(self.url, body, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                payload = json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            message = _message(exc)
            if exc.code == 429 or exc.code >= 500:
                after = exc.headers.get("Retry-After")
                return f"HTTP {exc.code} {message}", _seconds(after)
            hint = " (is OPENAI_API_KEY right?)" if exc.code in (401, 403) else ""
            return f"HTTP {exc.code} {message}{hint}", None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return f"no answer ({reason})", 0.0
        except ValueError as exc:
            return f"an answer that is not JSON ({exc})", 0.0
        try:
            rows = sorted(payload["data"], key=lambda d: d["index"])
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError) as exc:
            return f"an answer without data[].embedding ({exc})", None
        if len(vectors) != n:
            return f"{len(vectors)} vectors for {n} texts", None
        return vectors, None


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        found = json.loads(exc.read() or b"{}")
        error = found.get("error", found)
        text = error.get("message") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError, OSError):
        text = exc.reason
    return " ".join(str(text or exc.reason).split())[:200]


def _seconds(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
