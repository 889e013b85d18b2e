"""Token counting behind one small interface, with a vectorised estimate as the default.

A ``TokenCounter`` counts a list of texts. The estimate is a polars expression over
character counts with per-kind divisors; real tokenizers (tiktoken, HF tokenizers) are
optional extras loaded from local files only, never downloaded.
"""

from __future__ import annotations

import math
from typing import Protocol

import polars as pl

from mdchunk.pipeline.kinds import CODE_LIKE

# bias -> (prose divisor, code divisor): characters per token, rounded down so the
# estimate errs toward over-counting.
BIAS_DIVISORS: dict[str, tuple[float, float]] = {
    "balanced": (4.0, 2.75),
    "prose": (4.4, 3.0),
    "code": (3.6, 2.4),
}


def estimate_expr(bias: str, chars: pl.Expr, kind: pl.Expr) -> pl.Expr:
    """Estimated tokens for every row at once: ceil(chars / divisor-of-kind)."""
    prose, code = BIAS_DIVISORS[bias]
    divisor = pl.when(kind.is_in(sorted(CODE_LIKE))).then(pl.lit(code)).otherwise(pl.lit(prose))
    return (chars.cast(pl.Float64) / divisor).ceil().cast(pl.Int32)


class TokenCounter(Protocol):
    name: str  # recorded as token_source

    def count(self, texts: list[str]) -> list[int]: ...


class EstimateCounter:
    """Prose-divisor estimate for whole chunk texts (which mix kinds)."""

    def __init__(self, bias: str = "balanced"):
        self.bias = bias
        self.name = "estimate"

    def count(self, texts: list[str]) -> list[int]:
        # Called per document on a handful of texts (breadcrumbs, split pieces): plain
        # arithmetic here; whole tables of blocks are estimated by ``estimate_expr``.
        prose = BIAS_DIVISORS[self.bias][0]
        return [math.ceil(len(t) / prose) for t in texts]


class TiktokenCounter:
    def __init__(self, spec: str):
        import tiktoken  # optional extra

        self.name = f"tiktoken:{spec}"
        if spec.endswith(".tiktoken"):
            from tiktoken.load import load_tiktoken_bpe

            # A bare .tiktoken file carries ranks only; cl100k/o200k-era files share this
            # split pattern, which is the documented assumption for file-based encodings.
            self.enc = tiktoken.Encoding(
                name=spec,
                pat_str=_CL100K_PAT,
                mergeable_ranks=load_tiktoken_bpe(spec),
                special_tokens={},
            )
        else:
            self.enc = tiktoken.get_encoding(_local_name(spec))

    def count(self, texts: list[str]) -> list[int]:
        return [len(t) for t in self.enc.encode_ordinary_batch(texts)] if texts else []


class HFCounter:
    def __init__(self, path: str):
        from tokenizers import Tokenizer  # optional extra

        self.name = f"hf:{path}"
        self.tok = Tokenizer.from_file(path)

    def count(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self.tok.encode_batch(texts, add_special_tokens=False)]


_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def _local_name(name: str) -> str:
    """Prefer the bundled offline copy of an encoding, so nothing is downloaded."""
    import tiktoken

    names = tiktoken.list_encoding_names()
    if f"{name}_offline" in names:
        return f"{name}_offline"
    if name in names and name.endswith("_offline"):
        return name
    raise ValueError(
        f"tiktoken encoding {name!r} is not available offline; install the 'tokenizers' extra "
        f"(it bundles cl100k_base) or pass a path to a .tiktoken file"
    )


def make_counter(spec: str, bias: str = "balanced") -> TokenCounter:
    """``estimate``, ``tiktoken:NAME|PATH.tiktoken``, or ``hf:PATH/tokenizer.json``."""
    if spec == "estimate":
        return EstimateCounter(bias)
    if spec.startswith("tiktoken:"):
        return TiktokenCounter(spec.split(":", 1)[1])
    if spec.startswith("hf:"):
        return HFCounter(spec.split(":", 1)[1])
    raise ValueError(f"unknown tokenizer {spec!r}: use estimate, tiktoken:NAME or hf:PATH")
