"""Seed inputs of the core's fuzz target (fuzz/fuzz_targets/core.rs): the poison documents
(tests/poison.py, shrunk to fit libFuzzer's input size), ordinary documents and sample_data,
each once per format byte (0 markdown, 1 MDX, 2 plain text).

    python tools/fuzz_seeds.py fuzz/corpus/core
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.poison import ordinary, poison  # noqa: E402

MAX_BYTES = 1 << 20  # the fuzz run's -max_len


def seeds() -> list[bytes]:
    docs = list(poison(0.02).values()) + list(ordinary(20).values())
    docs += [p.read_bytes() for p in sorted((REPO / "sample_data").rglob("*")) if p.is_file()]
    return [bytes([mode]) + d[: MAX_BYTES - 1] for d in docs for mode in (0, 1, 2)]


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds():
        (out / hashlib.sha256(seed).hexdigest()[:16]).write_bytes(seed)
    print(f"{len(seeds())} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
