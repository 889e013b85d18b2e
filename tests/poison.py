"""Poison documents: inputs built to crash, stall or starve a chunker.

``poison(scale)`` returns {file name: bytes}, our own generated text, one file per kind.
``scale`` (0 < scale <= 1) shrinks the big ones: 1.0 gives the sizes of the issue (a 30 MB
line, a million lines; benchmarks/poison.py), the tests use less. ``ordinary(n)`` gives n
ordinary documents to put beside them.
"""

from __future__ import annotations

import base64
import random


def _yaml_laughs(levels: int, width: int = 9) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        refs = ", ".join([f"*l{i - 1}"] * width)
        lines.append(f"l{i}: &l{i} [{refs}]")
    return "\n".join(lines)


def _fm(body: str, rest: str = "# After\n\nThe body after the front matter.\n") -> str:
    return f"---\n{body}\n---\n{rest}"


def _prose(rng: random.Random, words: int) -> str:
    vocab = "store log index segment compactor reader writer page cache flush merge".split()
    out = []
    for i in range(words):
        out.append(rng.choice(vocab))
        if i % 17 == 16:
            out[-1] += "."
    return " ".join(out) + "."


def poison(scale: float = 1.0) -> dict[str, bytes]:
    def n(full: int) -> int:
        return max(int(full * scale), 10)

    rng = random.Random(13)
    deep = n(20_000)
    docs: dict[str, str | bytes] = {
        # front matter
        "yaml-billion-laughs.md": _fm(_yaml_laughs(9)),
        "yaml-laughs-6.md": _fm(_yaml_laughs(6)),
        "yaml-flow-deep.md": _fm("k: " + "[" * deep + "]" * deep),
        "yaml-flow-deep-5000.md": _fm("k: " + "[" * 5_000 + "]" * 5_000),
        "yaml-recursive-alias.md": _fm("a: &a [1, *a]\nb: *a"),
        "yaml-block-deep.md": _fm("k:\n" + "- " * 3_000 + "x"),
        "yaml-mapping-deep.md": _fm("k: " + "{a: " * 2_000 + "1" + "}" * 2_000),
        "yaml-many-aliases.md": _fm("a: &a x\nb: [" + ", ".join(["*a"] * 40_000) + "]"),
        "toml-deep.md": f"+++\nk = {'[' * 3_000}{']' * 3_000}\n+++\n# After\n\nBody.\n",
        "yaml-huge.md": _fm("k: " + "v" * 400_000),
        # headings
        "heading-lt.md": "# " + "<" * n(200_000) + "\n\nText.\n",
        "heading-underscore.md": "# " + "_" * n(200_000) + "\n\nText.\n",
        "heading-emphasis.md": "# " + "*a _b " * n(40_000) + "\n\nText.\n",
        "heading-brackets.md": "## " + "[" * n(100_000) + "\n\nText.\n",
        "heading-base64.md": "# Data "
        + base64.b64encode(rng.randbytes(37_500)).decode()
        + "\n\nText under the heading.\n",
        "heading-over-cap.md": "# " + _prose(rng, 3_000) + "\n\nText.\n\n## Next\n\nMore.\n",
        "setext-prose.md": _prose(rng, 900).replace(". ", ".\n")
        + "\n---\n\n"
        + "\n\n".join(_prose(rng, 400) for _ in range(6))
        + "\n",
        "setext-title-long.md": "Title of the guide\n==================\n\n"
        + "\n\n".join(_prose(rng, 600) for _ in range(8))
        + "\n",
        # code fences
        "fence-wide-unclosed.md": "# Code\n\n" + "`" * 10_000 + "\nbody\n" * n(5_000),
        "fence-wide-closed.md": "# Code\n\n"
        + "`" * 10_000
        + "\n"
        + "line of code\n" * n(5_000)
        + "`" * 10_000
        + "\n",
        "fence-info-huge.md": "```" + "x" * n(100_000) + "\ncode\n```\n",
        "inline-backticks.md": "Text " + "` " * n(100_000) + "\n",
        # MDX
        "mdx-unclosed.mdx": "".join(f"<Note{i % 3}>\n\nText {i}.\n\n" for i in range(n(20_000))),
        "mdx-closed-at-end.mdx": "<Box>\n\n" * n(10_000) + "</Box>\n",
        "mdx-many-lt.mdx": "<Tag " + "<" * n(500_000) + "\n",
        # size and shape
        "single-line.md": ("word " * n(6_000_000)).encode(),
        "short-lines.md": "a\n" * n(1_000_000),
        "deep-list.md": "".join(
            "  " * i + "- item\n" + "  " * i + "  continued\n" for i in range(n(2_000))
        ),
        "deep-quote.md": "> " * n(10_000) + "deep\n",
        "deep-html.md": "<div>\n" * n(50_000) + "text\n",
        "long-word.md": "# Word\n\n" + "x" * n(2_000_000) + "\n",
        "combining-marks.md": "# Marks\n\na" + "\u0301" * n(1_000_000) + "\n",
        "whitespace.md": " " * n(5_000_000) + "\n",
        "table-long-row.md": "| a | b |\n|---|---|\n| " + "cell " * n(20_000) + "| x |\n",
        "table-wide.md": "|" + "c|" * 5_000 + "\n|" + "-|" * 5_000 + "\n|" + "1|" * 5_000 + "\n",
        "table-many-rows.md": "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * n(200_000),
        "link-refs.md": "".join(f"[r{i}]: http://example.com/{i}\n" for i in range(n(100_000))),
        "image-brackets.md": "![" + "[" * n(100_000) + "\n",
        "many-headings.md": "".join(f"# H{i}\n" for i in range(n(100_000))),
        "lone-cr.md": "# CR\r" + "x\r" * n(1_000_000),
        # unreadable
        "binary.md": b"# Title\n\x00\x01\x02",
        "latin1.md": b"# Caf\xe9\n",
    }
    return {k: v if isinstance(v, bytes) else v.encode("utf-8") for k, v in docs.items()}


def ordinary(count: int = 100) -> dict[str, bytes]:
    """Ordinary documents: headings, prose, lists, code, a table, front matter."""
    rng = random.Random(7)
    out = {}
    for i in range(count):
        parts = [f"---\ntitle: Page {i}\ntags: [a, b]\n---\n# Page {i}\n"]
        for j in range(rng.randint(1, 6)):
            parts.append(f"## Part {j}\n\n{_prose(rng, rng.randint(20, 400))}\n")
            if j % 2:
                parts.append("- one\n- two\n  - nested\n")
            if j % 3 == 2:
                parts.append(f"```py\nx = {i * j}\nprint(x)\n```\n")
        if i % 5 == 0:
            parts.append("| k | v |\n|---|---|\n| a | 1 |\n| b | 2 |\n")
        out[f"docs/page-{i:03d}.md"] = "\n".join(parts).encode()
    return out
