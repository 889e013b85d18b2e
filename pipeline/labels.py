"""Input labels: with several INPUTs, every document's path (and so its doc_id) starts with
its input's label, so two inputs holding the same relative path never collide.

A single INPUT keeps plain relative paths, as mdchunk always did: labelling it would change
every doc_id and chunk id of every existing output folder. Adding a second INPUT later does
change them all; the publish guard refuses that run (most chunks removed) and says so.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from mdchunk.pipeline.sources import TABLE_SUFFIXES, InputError


def input_labels(inputs: list[str], names: dict[str, str] | None = None) -> dict[str, str | None]:
    """{INPUT: label}: None for one unnamed INPUT; else its --name, or by default the
    name of its folder (a file's folder; a table's file name without suffix)."""
    names = names or {}
    if len(inputs) == 1 and not names:
        return {inputs[0]: None}
    labels = {item: names.get(item) or default_label(item) for item in inputs}
    for item, label in labels.items():
        if not label or "/" in label or label in (".", ".."):
            raise InputError(f"{item}: {label!r} cannot be a label; name it with --name LABEL=PATH")
    seen: dict[str, str] = {}
    for item, label in labels.items():
        if label in seen:
            raise InputError(
                f"two INPUTs have the label {label!r} ({seen[label]}, {item}): their paths "
                "would collide; give them different labels with --name LABEL=PATH"
            )
        seen[label] = item
    return labels


def default_label(item: str) -> str:
    if "://" in item:
        path = PurePosixPath(item.split("://", 1)[1].rstrip("/"))
        return path.stem if path.suffix else path.name
    path = Path(item).resolve()
    if path.is_dir():
        return path.name
    return path.stem if path.suffix.lower() in TABLE_SUFFIXES else path.parent.name
