"""The demo world on the embedded stack, read from ``evals/worlds/maria.yaml``.

That file is the one definition of Maria, Vic, Paula and WO-198: the demo, the embedded-stack
tests, the unit-test builders and the golden scenarios (``world: {base: maria}``) all take them
from there.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from maestro.domain.models import Party
from maestro.evals.scenario import World
from maestro_dev.evals.loader import load_world

WORLD: World = load_world("maria")


def _party(party_id: str) -> Party:
    return next(p for p in WORLD.domain_parties() if p.party_id == party_id)


MARIA = _party("tenant-maria")
VIC = _party("vendor-vic")
PAULA = _party("pm-paula")


def seed_world(stack: Any, world: World, now: datetime | None = None) -> dict[str, int]:
    """Put ``world``'s parties (through the directory importer, as ``maestro directory import``
    would) and work orders in the stack's stores; each WO's version."""
    from maestro.adapters.dynamodb_memory import DynamoStateStore, DynamoWorkOrderStore
    from maestro_dev.directory.apply import apply_directory

    apply_directory(world.directory(), stack.directory, stack.parties)
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
