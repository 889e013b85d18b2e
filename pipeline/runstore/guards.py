"""Publish guards: a run that would do damage publishes nothing.

A nightly job follows the change set blindly (embed the adds, delete the removes), so a run
that read nothing (an empty folder, a mistyped --include), that would remove most of what
is published, or that silently changes every chunk id (a forgotten policy flag, a new
chunker version) must stop before it publishes, and say why with the counts. Each guard
has its flag for when the damage is intended. The guards compare with the run DIR/CURRENT
names (its manifest: policy, chunker version, chunk count).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from chunkmill.pipeline import arrow_columns
from chunkmill.pipeline.policy import ID_NEUTRAL

EXIT_NO_DOCUMENTS = 1  # as before the guards: no document could be read
EXIT_REFUSED = 4  # a guard refused to publish (mass removal, policy change)


class Refused(Exception):
    """The run published nothing; ``code`` is the exit code for the command line."""

    def __init__(self, message: str, code: int = EXIT_REFUSED):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Guards:
    allow_mass_delete: bool = False  # publish even an empty run or a mass removal
    max_removed: float = 0.5  # share of the published chunks a run may remove
    new_policy: bool = False  # accept a policy (or chunker version) other than the published
    dry_run: bool = False  # compute and report everything, publish nothing


@dataclass
class Baseline:
    """What the guards compare a run with: the published run (None fields: nothing
    published, or a manifest that cannot be read: then no policy comparison is possible)."""

    run_id: str | None = None
    folder: Path | None = None
    policy: dict | None = None
    chunker_version: str | None = None
    chunks: int = 0


def baseline(pub) -> Baseline:
    """The published run (a ``runstore.Published``) as far as its manifest tells: a damaged
    file does not change what the guards compare with."""
    if pub.manifest is None:
        return Baseline(pub.run_id, pub.folder)
    files = pub.manifest["files"]
    chunks = sum(f.get("rows") or 0 for f in files if f["name"].split("/")[0] == "chunks.parquet")
    return Baseline(
        pub.run_id, pub.folder, pub.manifest["policy"], pub.manifest["chunker_version"], chunks
    )


def policy_differences(base: Baseline, policy_json: str, chunker_version: str) -> list[str]:
    """``field old -> new`` for every policy field (and the chunker version) that differs
    from the published run's."""
    if base.policy is None:
        return []
    old, new = base.policy, json.loads(policy_json)
    out = [
        f"{k} {old.get(k)!r} -> {new.get(k)!r}"
        for k in sorted(set(old) | set(new))
        if old.get(k) != new.get(k)
    ]
    if base.chunker_version != chunker_version:
        out.append(f"chunker_version {base.chunker_version!r} -> {chunker_version!r}")
    return out


def check_policy(base: Baseline, policy_json: str, chunker_version: str, guards: Guards, warn=None):
    """Before any work: refuse a policy other than the published run's, unless
    ``new_policy``, or a published run without chunks (no id to change). A change of the
    ID_NEUTRAL fields alone (a new or forgotten link template) changes no id but every
    chunk's row (its url, op update to consumers): held the same way, told as such. A dry
    run is how a change is previewed: it publishes nothing, so it is not refused but told
    (``warn``). Returns the differences (accepted ones too)."""
    differences = policy_differences(base, policy_json, chunker_version)
    if not differences or guards.new_policy or not base.chunks:
        return differences
    moving = [d for d in differences if d.split(" ", 1)[0] not in ID_NEUTRAL]
    n, named = base.chunks, "; ".join(differences)
    effect = (
        f"all {n} published chunk ids would change, so every chunk would be embedded again"
        if moving
        else f"no chunk id changes, but the url of all {n} published chunks would change "
        "(each an update for consumers)"
    )
    if base.policy.get("tokenizer") == "estimate" != json.loads(policy_json)["tokenizer"]:
        # the usual case: output made when the estimate was the default counter
        effect += (
            " (the default now counts cl100k tokens exactly: `--tokenizer estimate` keeps "
            "the published counts)"
        )
    if not guards.dry_run:
        raise Refused(
            f"the policy differs from that of the published run {base.run_id} ({named}): "
            f"{effect}. Nothing was published. Run again with --new-policy to accept that, "
            "or with the published policy (`chunkmill runs DIR --json` shows it)."
        )
    if warn is not None:
        warn(
            f"the policy differs from the published run's ({named}): {effect}; a real run "
            "needs --new-policy"
        )
    return differences


def check_result(
    documents: int,
    skipped: Counter,
    removed: int,
    base: Baseline,
    guards: Guards,
    rejects: Counter | None = None,
    lost_unlisted: tuple[int, list[str]] = (0, []),
    limits: dict[str, tuple[str, str]] | None = None,
):
    """After the run's work, before it is published. ``removed``: the published chunks this
    run would remove because their documents are gone or rejected (chunks replaced by new
    ones of the same document, edited or packed under a new policy, are not a loss);
    ``skipped`` and ``rejects``: counts by reason, named when nothing was read;
    ``lost_unlisted``: the published chunks below folders that could not be listed that
    the run could not carry (no reusable published run), and those folders; ``limits``:
    (option, value) behind each reject reason of a worker's limit (pool.Limits.options):
    a document rejected there is read by raising that option, so the refusal says that."""
    if guards.allow_mass_delete:
        return
    lost, folders = lost_unlisted
    if lost:
        raise Refused(
            f"{', '.join(folders)}: could not be listed, and the published run cannot be "
            f"reused to carry what it held there, so this run would remove {lost} published "
            "chunks below it. Nothing was published. Make the folder readable (or repair the "
            "published run: `chunkmill check DIR`), or run again with --allow-mass-delete."
        )
    published = base.chunks
    rejects, limits = rejects or Counter(), limits or {}
    raise_limit = _raise_limits(rejects, limits)
    if documents == 0:
        loss = f", so this run would remove all {published} published chunks" if published else ""
        why = "; ".join(
            f"{sum(c.values())} {what}" + (f" ({_by_reason(c)})" if c else "")
            for what, c in (("rejected", rejects), ("skipped", skipped))
        )
        others = sum(skipped.values()) + sum(n for r, n in rejects.items() if r not in limits)
        check = (
            " Check INPUT, --include/--exclude and --max-bytes, or run again with "
            "--allow-mass-delete."
        )
        raise Refused(
            f"no document was read from INPUT ({why}){loss}. Nothing was published."
            f"{raise_limit}{check if others or not raise_limit else ''}",
            EXIT_NO_DOCUMENTS,
        )
    if published and removed / published > guards.max_removed:
        raise Refused(
            f"this run would remove {removed} of the {published} published chunks "
            f"({removed / published:.0%}, more than --max-removed {guards.max_removed:.0%}): "
            "those of documents it no longer reads or rejects. Nothing was published."
            + (
                raise_limit
                or " Check INPUT and --include/--exclude, or run again with --allow-mass-delete."
            )
        )


def _by_reason(counts: Counter) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))


def _raise_limits(rejects: Counter, limits: dict[str, tuple[str, str]]) -> str:
    """' 1 document was rejected at a worker's limit (1 too_much_memory): run again with
    --doc-memory above 1024 MB.' for the rejects of a worker's limit, or ''."""
    hit = Counter({r: n for r, n in rejects.items() if r in limits})
    if not hit:
        return ""
    n = sum(hit.values())
    what = "1 document was" if n == 1 else f"{n} documents were"
    raise_ = " and ".join("{} above {}".format(*limits[r]) for r in sorted(hit))
    return f" {what} rejected at a worker's limit ({_by_reason(hit)}): run again with {raise_}."


def chunks_of_lost_documents(base: Baseline, folder: Path) -> int | None:
    """The published chunks whose document is not a document of the new run (``folder``):
    gone from INPUT, or rejected. Those of documents that are still there were replaced
    (an edit, an accepted policy change), not lost. None when the published chunks cannot
    be read (then every removed chunk counts)."""
    import pyarrow.compute as pc

    from chunkmill.pipeline.runstore import parquet_files

    if base.folder is None:
        return None
    try:
        before = parquet_files.read(base.folder, "chunks", ["doc_id"])
    except OSError:
        return None
    known = arrow_columns.flat(parquet_files.read(folder, "documents", ["doc_id"])["doc_id"])
    return pc.sum(pc.invert(pc.is_in(before["doc_id"], value_set=known))).as_py() or 0
