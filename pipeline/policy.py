"""The chunking policy: one frozen, validated dataclass with a stable hash."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# The estimate presets. Their factors are token_estimate.BIAS_FACTORS, a module that loads
# the estimate's generated tables: this one stays light so that the command line starts
# fast (tests/test_policy.py holds the names and the help's factors to it).
BIASES = ("balanced", "code", "prose")

# Bumped whenever the output for the same input and policy changes.
# What each version changed: CHANGELOG.md, Version labels. The label keeps the name the
# product had when the ids began, so that no chunk id changes with the name.
CHUNKER_VERSION = "mdchunk-6"
# Bumped when chunk rows change for the same input and policy while every chunk id keeps its
# meaning: a run does not reuse the chunks of a published run assembled otherwise, it packs
# that run's stored blocks again once (nothing is parsed), the ids whose boundaries stay are
# kept and their changed rows reach consumers as updates (`chunkmill changes --updates`).
# What each version changed: CHANGELOG.md, Version labels.
ASSEMBLY_VERSION = "assembly-3"
MIN_MAX_TOKENS = 16  # a smaller cap leaves no room for a context header and a word
# A cap given (--max-tokens N, max_tokens in a policy file or in chunkmill.run) brings the
# sizes not given beside it, in the default policy's proportions: the target 3/4 of the cap
# (750 of 1,000), the minimum and the overlap 4/15 and 8/75 of the target (200 and 80 of
# 750), so a target given with the cap keeps a minimum below it.
TARGET_OF_CAP = (3, 4)
OF_TARGET = {"min_tokens": (4, 15), "overlap_tokens": (8, 75)}
# The terms of pipeline/postings.py: bump when they change. A run reuses the postings rows of
# unchanged chunks only from a published postings.parquet whose footer names this version.
POSTINGS_VERSION = "postings-1"

CHOICES = {
    "front_matter": ("metadata", "include", "strip"),
    "mdx": ("auto", "on", "off"),
    "bias": BIASES,
    "strategy": ("auto", "markdown", "recursive", "fixed"),
}


def _field(default, help: str, **meta):
    """A policy field with its help (``chunkmill.jobs.options`` makes its flag of it)."""
    return dataclasses.field(default=default, metadata={"help": help, **meta})


class PolicyError(ValueError):
    """A policy that contradicts itself or names something unknown."""


@dataclass(frozen=True)
class Policy:
    """Every setting that changes chunk output. Frozen and validated: a contradictory
    policy raises PolicyError at once. ``policy_hash`` is stable across processes."""

    target_tokens: int = _field(750, "Size chunks are packed toward.")
    max_tokens: int = _field(
        1000,
        "Hard cap: no chunk's n_tokens exceeds it. Given without them, it sets the target to "
        "75 % of it and min and overlap in the default's proportions to the target (200 and "
        "80 of 750): --max-tokens 256 alone gives 192, 51 and 20.",
    )
    min_tokens: int = _field(200, "Chunks below this merge with a neighbour of their section.")
    overlap_tokens: int = _field(
        80, "Tokens of the previous chunk repeated at the start of the next."
    )
    heading_depth: int = _field(3, "Headings of this level or higher start a new chunk.")
    front_matter: str = _field(
        "metadata",
        "metadata: parsed into a column; include: chunked as text; strip: dropped.",
    )
    mdx: str = _field(
        "auto",
        "Parse MDX import/export and JSX blocks: auto = for .mdx files only, on, off.",
    )
    bias: str = _field(
        "balanced",
        "Token-estimate preset: the weights of ASCII characters times 1.0 (balanced), 0.91 "
        "(prose: leaner, bigger chunks) or 1.12 (code: heavier); other scripts keep their "
        "weights.",
    )
    strategy: str = _field(
        "auto",
        "auto: markdown for markdown with headings, sentence packing for markdown without, "
        "recursive for plain text; or markdown, recursive, fixed for every document.",
    )
    tokenizer: str = _field(
        "tiktoken:cl100k_base",
        "What counts tokens: tiktoken:NAME (cl100k_base, o200k_base: exact, counted in the "
        "core) or tiktoken:PATH.tiktoken | hf:PATH/tokenizer.json (the model's own, its "
        "special tokens included, counted in the core) | estimate (no vocabulary: "
        "script-aware, errs toward over-counting cl100k and o200k, up to 2x, so more, "
        "smaller chunks; the default before cl100k's). Several of the core's, "
        "comma-separated (tiktoken:cl100k_base,hf:PATH), keep every chunk within the cap in "
        "each; n_tokens is the largest count. Nothing is downloaded.",
    )
    breadcrumb_prefix: bool = _field(
        True,
        "Start embed_text with the context header 'Title > H1 > H2' (the chunk's own heading "
        "left out when its text starts with it) and, in a document's first chunk, the "
        "context_keys lines.",
    )
    title_keys: tuple[str, ...] = _field(
        ("title",),
        "Front matter keys that give the document title, first found wins; else the first "
        "H1 (or the top heading a document opens with), else the file stem.",
    )
    context_keys: tuple[str, ...] = _field(
        ("description",),
        "Front matter keys written as 'key: value' lines into the embed_text of a "
        "document's first chunk; '' for none.",
    )
    link_template: str = _field(
        "",
        "Fill each chunk's url, e.g. 'https://docs.example.com/{path_stem}#{anchor}'. "
        "Placeholders: {path} (relative, with extension), {path_stem} (without), {url_path} "
        "(as {path_stem}, a trailing index, _index or README dropped: guide/index.md is "
        "'guide'), {stem}, {dir}, {anchor} ('#{anchor}' is dropped when a chunk has none), "
        "{line_start}, {line_end}; no format specs.",
        metavar="TEMPLATE",
    )
    pack_siblings: bool = _field(
        True,
        "Pack consecutive whole sections with the same parent heading into one chunk, up to "
        "target_tokens.",
    )

    def __post_init__(self) -> None:
        for name in ("title_keys", "context_keys"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = [k.strip() for k in value.split(",") if k.strip()]
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        from chunkmill.pipeline.tokens import tokenizer_specs

        if isinstance(self.tokenizer, str):  # one spelling, one policy hash: cl100k_base is
            # tiktoken:cl100k_base
            object.__setattr__(self, "tokenizer", ",".join(tokenizer_specs(self.tokenizer)))
        problems = self.problems()
        if problems:
            raise PolicyError("invalid policy: " + "; ".join(problems))

    def problems(self) -> list[str]:
        out = []
        for name in (
            "target_tokens",
            "max_tokens",
            "min_tokens",
            "overlap_tokens",
            "heading_depth",
        ):
            value = getattr(self, name)
            least = MIN_MAX_TOKENS if name == "max_tokens" else 0
            if not _whole(value) or value < least:
                out.append(f"{name} must be a whole number >= {least}, got {value!r}")
        if out:
            return out
        t, m, o, cap = self.target_tokens, self.min_tokens, self.overlap_tokens, self.max_tokens
        sizes = []
        if m > t:
            sizes.append(f"min_tokens ({m}) > target_tokens ({t})")
        if t > cap:
            sizes.append(f"target_tokens ({t}) > max_tokens ({cap})")
        if o >= t:
            sizes.append(f"overlap_tokens ({o}) must be < target_tokens ({t})")
        if sizes:  # one suggestion for all of them: the sizes the cap brings when given alone
            fit = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in cap_sizes(cap).items())
            sizes[-1] += f" (--max-tokens {cap} alone sets {fit})"
        out += sizes
        if not 1 <= self.heading_depth <= 6:
            out.append(f"heading_depth must be 1-6, got {self.heading_depth}")
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                out.append(
                    f"{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}"
                )
        from chunkmill.pipeline.tokens import tokenizer_specs

        specs = tokenizer_specs(self.tokenizer) if isinstance(self.tokenizer, str) else [""]
        for tok in specs:
            kind, _, arg = tok.partition(":")
            if not (tok == "estimate" or (kind in ("tiktoken", "hf") and arg)):
                out.append(f"unknown tokenizer {tok!r}: use estimate, tiktoken:NAME or hf:PATH")
        if len(specs) > 1 and "estimate" in specs:
            out.append("estimate cannot be one of several tokenizers: it counts none")
        for name in ("breadcrumb_prefix", "pack_siblings"):
            if not isinstance(getattr(self, name), bool):
                out.append(f"{name} must be true or false, got {getattr(self, name)!r}")
        for name in ("title_keys", "context_keys"):
            value = getattr(self, name)
            if not (isinstance(value, tuple) and all(isinstance(k, str) and k for k in value)):
                out.append(f"{name} must be a list of front matter keys, got {value!r}")
        if not isinstance(self.link_template, str):
            out.append(f"link_template must be text, got {self.link_template!r}")
        elif self.link_template:
            from chunkmill.pipeline.context import check_template

            out += check_template(self.link_template)
        return out

    def canonical_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    @cached_property
    def policy_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @cached_property
    def id_hash(self) -> str:
        """The policy as chunk ids see it: ``policy_hash`` without the fields that change
        no embed_text and no boundary (ID_NEUTRAL: the link template only fills ``url``).
        Equal to ``policy_hash`` when those fields are unset, so ids made before it exist
        stay; a new link template updates urls (op update) instead of replacing every id."""
        defaults = {f.name: f.default for f in dataclasses.fields(self) if f.name in ID_NEUTRAL}
        return dataclasses.replace(self, **defaults).policy_hash

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides) -> Policy:
        """Defaults, then the YAML file at ``path`` (if any), then the overrides that are
        not None. Raises PolicyError naming the file and the problem."""
        return load(path, **overrides)

    def replace(self, **changes) -> Policy:
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


FIELDS = [f.name for f in dataclasses.fields(Policy)]


def cap_sizes(max_tokens: int, target: int | None = None) -> dict[str, int]:
    """The target, minimum and overlap a cap brings (TARGET_OF_CAP, OF_TARGET); with
    ``target``, the minimum and overlap that go with it."""
    if target is None:
        target = max_tokens * TARGET_OF_CAP[0] // TARGET_OF_CAP[1]
    return {"target_tokens": target} | {
        name: target * num // den for name, (num, den) in OF_TARGET.items()
    }


ID_NEUTRAL = ("link_template",)  # fields no chunk id depends on (see Policy.id_hash)


def load(path: str | Path | None = None, **overrides) -> Policy:
    """Defaults, then the YAML file (if any), then the overrides that are not None; a cap
    set by either brings the sizes not set beside it (``cap_sizes``)."""
    values: dict = {}
    if path is not None:
        data = _read_yaml(path)
        if not isinstance(data, dict):
            raise PolicyError(f"{path}: a policy file is a mapping of field: value")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise PolicyError(
                f"{path}: unknown policy field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}"
            )
        if isinstance(data.get("mdx"), bool):  # YAML 1.1 reads a bare on/off as a boolean
            data["mdx"] = "on" if data["mdx"] else "off"
        values.update(data)
    values.update({k: v for k, v in overrides.items() if v is not None})
    cap, target = values.get("max_tokens"), values.get("target_tokens")
    if _whole(cap) and cap >= MIN_MAX_TOKENS:
        for name, size in cap_sizes(cap, target if _whole(target) else None).items():
            values.setdefault(name, size)
    return Policy(**values)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_yaml(path: str | Path) -> object:
    """The policy file's YAML, within the depth and alias budgets of front matter (an
    alias bomb would grow to gigabytes when a field is checked)."""
    import yaml

    from chunkmill.pipeline.safe_yaml import LOADER, refusal

    try:
        text = Path(path).read_text(encoding="utf-8")
        refused = refusal(text)
        if refused:
            raise PolicyError(f"{path}: policy not read: {refused}")
        return yaml.load(text, Loader=LOADER) or {}
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{path}: policy not read: not UTF-8 (byte offset {exc.start})") from exc
    except yaml.YAMLError as exc:  # one line: the problem and where, not PyYAML's drawing
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PolicyError(f"{path}: not valid YAML: {problem}{where}") from exc
