"""Applying a validated directory to a stack's tables: the one path the CLI (on ``maestro serve``
or a deployed stack), the embedded stack's world seeding and the tests all take."""

from __future__ import annotations

from maestro.adapters.dynamodb_directory import DirectoryEntity, DynamoDirectory
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.domain.directory import Directory
from maestro.domain.directory_import import ImportPlan, plan_import

__all__ = ["apply_directory"]


def apply_directory(
    desired: Directory,
    store: DynamoDirectory,
    parties: DynamoPartyDirectory,
    *,
    prune: bool = False,
    dry_run: bool = False,
) -> ImportPlan:
    """Make the stored directory ``desired`` (entities absent from it kept unless ``prune``) and
    its phone → party rows follow; with ``dry_run``, or when the files clash with entries they
    do not list but the store keeps (``plan.conflicts``), only say what would change.

    The phone rows are written first: if the directory write then fails, the next import finds
    the directory still as it was and plans it again (a phone row already right is left alone),
    whereas the other order would leave a pruned person's phone bound with nothing to plan its
    removal from.
    """
    plan = plan_import(desired, store.snapshot(), parties.all_by_phone(), prune=prune)
    if dry_run or plan.conflicts:  # a clash with what is kept: nothing is written
        return plan
    parties.write(plan.party_puts, plan.party_deletes)
    puts: list[DirectoryEntity] = [c.after for c in (*plan.added, *plan.changed) if c.after]
    removes: list[DirectoryEntity] = [c.before for c in plan.changed if c.before]
    if prune:
        removes += [c.before for c in plan.absent if c.before]
    store.write(puts, removes)
    return plan
