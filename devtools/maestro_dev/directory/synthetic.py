"""A synthetic directory of any size, deterministic: the import benchmark's and the tests' input
(``make bench``'s ``directory_import_s`` imports 5 properties, 2,000 tenants, 200 vendors and
20 PMs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from maestro.domain.directory import (
    ALL_PROPERTIES,
    Directory,
    OnCall,
    Person,
    PersonRole,
    Property,
    Trade,
    Unit,
    Vendor,
)

__all__ = ["synthetic_directory"]

_ZONES = ("America/Chicago", "America/New_York", "America/Denver", "America/Los_Angeles")
_TRADES = tuple(Trade)
SHIFT = timedelta(hours=12)


def synthetic_directory(
    *,
    properties: int = 5,
    tenants: int = 2000,
    vendors: int = 200,
    pms: int = 20,
    shifts_per_property: int = 28,
    start: datetime = datetime(2026, 6, 15, 8, 0, tzinfo=UTC),
) -> Directory:
    """Tenants one to a unit, spread over the properties (every tenth with a second phone);
    PMs dealt to properties in turn, each property's shifts (12 h, back to back) rotating among
    its PMs; vendors of one or two trades, a fifth of them serving every property."""
    props = tuple(
        Property(
            property_id=f"prop-{p:02d}",
            name=f"Synthetic Court {p}",
            address=f"{100 + p} Main St",
            timezone=_ZONES[p % len(_ZONES)],
        )
        for p in range(properties)
    )
    units: list[Unit] = []
    people: list[Person] = []
    for t in range(tenants):
        prop = props[t % properties].property_id
        unit_id = f"{prop}-u{t:05d}"
        units.append(Unit(unit_id=unit_id, property_id=prop, label=f"{t // properties + 1}"))
        phones: tuple[str, ...] = (f"+1415{7000000 + t:07d}",)
        if t % 10 == 0:
            phones += (f"+1628{7000000 + t:07d}",)
        people.append(
            Person(
                person_id=f"tenant-{t:05d}",
                role=PersonRole.TENANT,
                name=f"Tenant {t}",
                phones=phones,
                unit_id=unit_id,
                language="es" if t % 7 == 0 else None,
                sms_consent=t % 50 != 0,
            )
        )
    managers: dict[str, list[str]] = {p.property_id: [] for p in props}
    for m in range(pms):
        managed = (props[m % properties].property_id,)
        managers[managed[0]].append(f"pm-{m:03d}")
        people.append(
            Person(
                person_id=f"pm-{m:03d}",
                role=PersonRole.PM,
                name=f"Manager {m}",
                phones=(f"+1415{9000000 + m:07d}",),
                property_ids=managed,
            )
        )
    vendor_rows = tuple(
        Vendor(
            vendor_id=f"vendor-{v:04d}",
            name=f"Vendor {v}",
            phone=f"+1415{8000000 + v:07d}",
            trades=tuple(dict.fromkeys((_TRADES[v % 8], _TRADES[(v * 3) % 8]))),
            property_ids=(ALL_PROPERTIES,) if v % 5 == 0 else (props[v % properties].property_id,),
            rank=v % 3 + 1,
            after_hours=v % 4 == 0,
        )
        for v in range(vendors)
    )
    on_call = tuple(
        OnCall(
            property_id=prop,
            person_id=names[s % len(names)],
            starts_at=start + s * SHIFT,
            ends_at=start + (s + 1) * SHIFT,
        )
        for prop, names in managers.items()
        if names
        for s in range(shifts_per_property)
    )
    return Directory(
        properties=props,
        units=tuple(units),
        people=tuple(people),
        vendors=vendor_rows,
        on_call=on_call,
    )
