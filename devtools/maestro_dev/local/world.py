"""The demo world on the embedded stack, read from ``evals/worlds/maria.yaml``.

That file is the one definition of Maria, Vic, Paula and WO-198: the demo, the embedded-stack
tests, the unit-test builders and the golden scenarios (``world: {base: maria}``) all take them
from there.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from maestro.domain.directory import Directory, Person, Property, Unit
from maestro.domain.directory_import import ImportPlan, check_directory
from maestro.domain.models import Party
from maestro_dev.eval_harness.loader import load_world
from maestro_dev.eval_harness.scenario import WORLD_PROPERTY, World

WORLD: World = load_world("maria")


def _party(party_id: str) -> Party:
    return next(p for p in WORLD.domain_parties() if p.party_id == party_id)


MARIA = _party("tenant-maria")
VIC = _party("vendor-vic")
PAULA = _party("pm-paula")


def seed_directory(stack: Any, directory: Directory) -> ImportPlan:
    """Import ``directory`` into ``stack`` (anything with ``.directory`` and ``.parties``
    stores: the embedded stack, the ingestion rig) as ``maestro directory import`` does: the
    same cross-row checks, then :func:`apply_directory` (entries it does not list are kept).
    The one way tests, benchmarks and the demo put people in a stack; an error or a clash with
    what is stored raises, naming each, so a test cannot seed what an import would refuse."""
    from maestro_dev.directory.apply import apply_directory

    problems = check_directory(directory)
    plan = None if problems else apply_directory(directory, stack.directory, stack.parties)
    if plan is None or plan.conflicts:
        refused = plan.conflicts if plan is not None else problems
        raise ValueError(
            "the importer refuses this directory:\n" + "\n".join(p.line() for p in refused)
        )
    return plan


def housed(*tenants: Person, at: Property = WORLD_PROPERTY) -> Directory:
    """``tenants`` with the units they name (each ``unit_id`` also its label), all at ``at``
    (the world's property unless given): a directory for :func:`seed_directory`."""
    labels = dict.fromkeys(t.unit_id for t in tenants if t.unit_id)
    return Directory(
        properties=(at,),
        units=tuple(Unit(unit_id=u, property_id=at.property_id, label=u) for u in labels),
        people=tenants,
    )


def seed_world(stack: Any, world: World, now: datetime | None = None) -> dict[str, int]:
    """Put ``world``'s parties (through the directory importer, :func:`seed_directory`) and
    work orders in the stack's stores; each WO's version."""
    from maestro.adapters.dynamodb_state import DynamoStateStore
    from maestro.adapters.dynamodb_work_orders import DynamoWorkOrderStore

    seed_directory(stack, world.directory())
    store = DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"])
    versions: dict[str, int] = {}
    at = now or stack.clock.now()
    for wo in world.domain_work_orders(at):
        store.create(wo)
        versions[wo.wo_id] = wo.version
    states = DynamoStateStore(stack.ddb, stack.tables["state"])
    for state in world.domain_states(at):
        states.put(state, expected_version=None)
    return versions


def seed(stack: Any) -> None:
    """Maria in 3B, Vic the plumber, Paula the on-call PM, and WO-198 (the tap Vic fixed last
    week, with a rating request out: the trap leak-204's "2 onward" must not fall into)."""
    seed_world(stack, WORLD)
