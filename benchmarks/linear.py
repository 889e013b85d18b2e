"""Chunking time of one large document at 1x, 2x and 4x its size (should grow linearly).

Two documents are generated in memory: one of about 100k estimated tokens and one of 5 MB,
each a repetition of varied markdown sections (prose, lists, code, tables). Reported: seconds
for the whole documents -> blocks -> chunks path, and seconds per MB.
"""

from __future__ import annotations

import json
import sys
import time

from chunkmill.pipeline import block, chunk, document
from chunkmill.pipeline.document import RawDocument
from chunkmill.pipeline.policy import Policy

SECTION = """## Section {i}

Pebble stores every write in a log segment {i} before the index sees it. Segments are merged
by the compactor when enough of them pile up. Readers never block writers. {i} is a number.

- first point about section {i}
- second point, with `inline code` and a [link](https://example.invalid/{i})
  - a nested point under the second one

```python
def handler_{i}(request):
    value = request.get("key_{i}")
    return {{"ok": True, "value": value}}
```

| key | value |
|-----|-------|
| a{i} | {i} |
| b{i} | {i} |

"""


def make_doc(min_chars: int) -> str:
    parts, size, i = ["# Generated document\n\n"], 0, 0
    while size < min_chars:
        s = SECTION.format(i=i)
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts)


def time_one(text: str, policy: Policy) -> float:
    start = time.perf_counter()
    docs, _ = document.documents([RawDocument("big.md", "bench", text.encode())])
    blocks, _ = block.blocks(docs, policy.bias)
    chunks, _ = chunk.chunks(docs, blocks, policy)
    assert chunks.num_rows > 0
    return time.perf_counter() - start


def main() -> dict:
    policy = Policy()
    results = {}
    for label, base_chars in (("100k-token", 400_000), ("5MB", 5_000_000)):
        rows = []
        for factor in (1, 2, 4):
            text = make_doc(base_chars * factor)
            seconds = time_one(text, policy)
            rows.append(
                {
                    "factor": factor,
                    "mb": round(len(text) / 1e6, 2),
                    "seconds": round(seconds, 2),
                    "seconds_per_mb": round(seconds / (len(text) / 1e6), 2),
                }
            )
        results[label] = rows
    for label, rows in results.items():
        print(
            f"{label:>10}: "
            + "  ".join(
                f"{r['factor']}x {r['mb']} MB {r['seconds']} s ({r['seconds_per_mb']} s/MB)"
                for r in rows
            )
        )
    return results


if __name__ == "__main__":
    json.dump(main(), sys.stdout if "--json" in sys.argv else open("/dev/null", "w"), indent=1)
