"""Run limits: options that bound what one document may cost. They are not policy (they do
not change the chunks of a document that stays within them), so they are not hashed."""

import os

DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # documents larger than this are rejected (too_large)
# A worker that works longer than this on one batch, or one document, is stopped and the
# document rejected (timeout). Ordinary documents take milliseconds; 8 MB about 10 s.
DEFAULT_DOC_TIMEOUT = 60.0
# ... or whose resident memory grows past this (too_much_memory): about 8 MB of markdown.
DEFAULT_DOC_MEMORY_MB = 1024

# What chunking one document in this process can cost at most, from its size alone: per
# line (a line can open one block: a heading costs the most, about 1.6 KB; an empty heading
# in two bytes, a list item, a rule, a fence a third to two thirds of that) and per byte
# (the text, its copies and the chunks made of it, about 25 bytes per byte of prose). Peak
# resident memory of `chunk_text` on 1 MB of each kind (2026-11-29, commit 3c8a4c6): headings
# 389 MB (250,000 lines), empty headings 733 MB (500,000), rules 280, setext headings 389,
# HTML blocks 182, fences 153, quotes 124, list items 95, tables 29, prose 24.
LINE_BYTES = 1700
BYTE_BYTES = 32


def memory_needed_mb(data: bytes) -> int:
    """An upper bound, in MB, of the memory that chunking ``data`` (a document's UTF-8
    bytes) takes in this process: ``LINE_BYTES`` per line plus ``BYTE_BYTES`` per byte.
    Counting its lines is a pass over the bytes, in C: nothing is allocated for them."""
    return (LINE_BYTES * (data.count(b"\n") + 1) + BYTE_BYTES * len(data)) >> 20


def over_memory(data: bytes | None, limit_mb: int | None) -> str | None:
    """Why a document may not be chunked in this process under ``limit_mb`` (None: no
    limit), as a reject's detail; None when it may."""
    if data is None or limit_mb is None:
        return None
    if (LINE_BYTES + BYTE_BYTES) * (len(data) + 1) >> 20 <= limit_mb:
        return None  # within the limit even if every byte were a line: nothing to count
    needed = memory_needed_mb(data)
    if needed <= limit_mb:
        return None
    lines = data.count(b"\n") + 1
    return (
        f"chunking it could take up to {needed:,} MB ({len(data) / 1e6:.1f} MB in {lines:,} "
        f"lines), more than the {limit_mb:,} MB allowed in this process (memory_mb; None for "
        "no limit; the workers of a run are watched instead, --doc-memory)"
    )


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity, where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
