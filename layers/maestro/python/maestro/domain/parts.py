"""What a thing in a home is made of: the part-of table a brain reads a detail by.

A tenant who reported "the kitchen sink leaks" and then texts "the trap under it is loose now"
is saying more about the sink, not reporting a new problem: the trap is a part of the sink.
The table is small on purpose: the parts a tenant names when they say more about a fixture,
by the fixture a work order is about. A part may belong to several things (a handle: a door, a
toilet, a faucet); a reader decides between them by what is open.

Pure data, singular lower-case words; readers match plurals and stems on their side.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["PARTS_OF", "all_parts", "parts_of"]

PARTS_OF: Mapping[str, frozenset[str]] = {
    "sink": frozenset(
        {
            "faucet", "tap", "handle", "drain", "trap", "pipe", "cabinet", "basin", "sprayer",
            "stopper", "spout", "valve", "hose", "disposal", "aerator", "strainer",
        }
    ),
    "faucet": frozenset(
        {"handle", "spout", "aerator", "cartridge", "knob", "valve", "sprayer", "hose"}
    ),
    "toilet": frozenset(
        {"tank", "flapper", "seat", "lid", "handle", "bowl", "chain", "valve"}
    ),
    "shower": frozenset(
        {"head", "showerhead", "drain", "handle", "knob", "valve", "curtain", "rod", "tile",
         "grout", "spout", "hose"}
    ),
    "tub": frozenset(
        {"faucet", "spout", "drain", "stopper", "tile", "grout", "caulk", "handle", "knob"}
    ),
    "door": frozenset(
        {"hinge", "lock", "latch", "knob", "handle", "deadbolt", "frame", "peephole",
         "threshold", "closer", "key"}
    ),
    "window": frozenset(
        {"pane", "glass", "latch", "lock", "screen", "sash", "frame", "crank", "sill", "seal",
         "track"}
    ),
    "refrigerator": frozenset(
        {"door", "shelf", "drawer", "gasket", "seal", "compressor", "icemaker", "dispenser",
         "handle", "light", "coil", "freezer"}
    ),
    "dishwasher": frozenset(
        {"door", "rack", "gasket", "seal", "hose", "drain", "pump", "arm", "latch", "filter"}
    ),
    "washing machine": frozenset(
        {"door", "drum", "hose", "drain", "pump", "lid", "gasket", "seal", "belt", "agitator"}
    ),
    "dryer": frozenset({"door", "drum", "vent", "duct", "belt", "lint", "filter", "timer"}),
    "oven": frozenset({"door", "element", "igniter", "knob", "rack", "light", "thermostat"}),
    "stove": frozenset({"burner", "knob", "igniter", "grate", "element", "pilot", "hood"}),
    "water heater": frozenset({"tank", "pilot", "valve", "thermostat", "pipe", "element"}),
    "furnace": frozenset({"filter", "pilot", "igniter", "blower", "vent", "duct", "thermostat"}),
    "radiator": frozenset({"valve", "pipe", "knob"}),
    "air conditioner": frozenset(
        {"filter", "vent", "compressor", "coil", "fan", "remote", "thermostat", "duct"}
    ),
    "outlet": frozenset({"faceplate", "socket"}),
    "light": frozenset({"bulb", "fixture", "switch", "shade"}),
}  # fmt: skip


def parts_of(thing: str) -> frozenset[str]:
    """The parts of ``thing`` the table knows (empty for a thing it does not know)."""
    return PARTS_OF.get(thing, frozenset())


def all_parts() -> frozenset[str]:
    """Every part the table knows, of whatever thing."""
    return frozenset().union(*PARTS_OF.values())
