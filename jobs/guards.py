"""Publish guards: a run that would do damage publishes nothing.

A nightly job follows the change set blindly (embed the adds, delete the removes), so a run
that read nothing (an empty folder, a mistyped --include), that would remove most of what
is published, or that silently changes every chunk id (a forgotten policy flag, a new
chunker version) must stop before it publishes, and say why with the counts. Each guard
has its flag for when the damage is intended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

EXIT_NO_DOCUMENTS = 1  # as before: no document could be read
EXIT_REFUSED = 4  # a guard refused to publish


class Refused(Exception):
    """The run published nothing; ``code`` is the exit code for the command line."""

    def __init__(self, message: str, code: int = EXIT_REFUSED):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Guards:
    allow_mass_delete: bool = False  # publish even an empty run or a mass removal
    max_removed: float = 0.5  # share of the published chunks a run may remove
    new_policy: bool = False  # accept a policy (or chunker version) that changes every id
    dry_run: bool = False  # compute and report everything, publish nothing


def policy_differences(published: dict, policy_json: str, chunker_version: str) -> list[str]:
    """``field old -> new`` for every policy field (and the chunker version) that differs
    from the published run's."""
    old = json.loads(published["policy"] or "{}")
    new = json.loads(policy_json)
    out = [
        f"{k} {old.get(k)!r} -> {new.get(k)!r}"
        for k in sorted(set(old) | set(new))
        if old.get(k) != new.get(k)
    ]
    if published["chunker_version"] != chunker_version:
        out.append(f"chunker_version {published['chunker_version']!r} -> {chunker_version!r}")
    return out


def check_policy(published: dict, differences: list[str], chunks: int, guards: Guards) -> None:
    if differences and not guards.new_policy:
        raise Refused(
            f"the policy differs from that of the published run {published['run_id']} "
            f"({'; '.join(differences)}): all {chunks} published chunk ids would change, "
            "so every chunk would be embedded again. Nothing was published. Run again with "
            "--new-policy to accept that, or with the published policy "
            "(`mdchunk runs DIR --json` shows it)."
        )


def check_result(
    documents: int,
    skipped: int,
    removed: int,
    published_chunks: int,
    guards: Guards,
) -> None:
    """After the run's work, before it is published. ``removed``: the published chunks this
    run would remove (for an accepted policy change: those of documents that are gone)."""
    if guards.allow_mass_delete:
        return
    if documents == 0:
        loss = f", so this run would remove all {published_chunks} published chunks"
        raise Refused(
            f"no document was read from INPUT ({skipped} skipped){loss if published_chunks else ''}"
            ". Nothing was published. Check INPUT and --include/--exclude, or run again with "
            "--allow-mass-delete.",
            EXIT_NO_DOCUMENTS,
        )
    if published_chunks and removed / published_chunks > guards.max_removed:
        raise Refused(
            f"this run would remove {removed} of the {published_chunks} published chunks "
            f"({removed / published_chunks:.0%}, more than --max-removed "
            f"{guards.max_removed:.0%}). Nothing was published. Check INPUT and "
            "--include/--exclude, or run again with --allow-mass-delete."
        )
