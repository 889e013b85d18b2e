"""Input labels: with several INPUTs, every document's path (and so its doc_id) starts with
its input's label, so two inputs holding the same relative path never collide.

A single INPUT keeps plain relative paths, as chunkmill always did: labelling it would change
every doc_id and chunk id of every existing output folder. Adding a second INPUT later does
change them all; the publish guard refuses that run (most chunks removed) and says so.
Files named one by one from the same folder share that folder's label without conflict
(their names differ); two different folders with the same label are refused.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from chunkmill.pipeline.inputs.sources import TABLE_SUFFIXES, InputError


def input_labels(inputs: list[str], names: dict[str, str] | None = None) -> dict[str, str | None]:
    """{INPUT: label}: None for a single INPUT; else its --name, or by default the name of
    its folder (a file's folder; a table's file name without suffix)."""
    names = names or {}
    if len(inputs) == 1:
        if names:
            raise InputError(
                "--name labels paths only when there are several INPUTs; with one INPUT "
                "paths stay relative to it"
            )
        return {inputs[0]: None}
    labels = {item: names.get(item) or default_label(item) for item in inputs}
    seen: dict[str, tuple[str, str]] = {}
    for item, label in labels.items():
        if not label or "/" in label or label in (".", ".."):
            raise InputError(f"{item}: {label!r} cannot be a label; name it with --name LABEL=PATH")
        root = _root(item)
        if label in seen and seen[label][1] != root:
            raise InputError(
                f"two INPUTs have the label {label!r} ({seen[label][0]}, {item}): their paths "
                "would collide; give them different labels with --name LABEL=PATH"
            )
        seen.setdefault(label, (item, root))
    return labels


def default_label(item: str) -> str:
    if "://" in item:
        path = PurePosixPath(item.split("://", 1)[1].rstrip("/"))
        return path.stem if path.suffix.lower() in TABLE_SUFFIXES else path.name
    path = Path(item).resolve()
    if path.is_dir():
        return path.name
    return path.stem if path.suffix.lower() in TABLE_SUFFIXES else path.parent.name


def _root(item: str) -> str:
    """What an input's paths are relative to: the folder itself, a file's folder, or the
    table itself (its rows name themselves)."""
    if "://" in item:
        return item.rstrip("/")
    path = Path(item).resolve()
    if path.is_dir() or path.suffix.lower() in TABLE_SUFFIXES:
        return str(path)
    return str(path.parent)
