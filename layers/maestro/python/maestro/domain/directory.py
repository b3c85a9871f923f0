"""The directory: properties, units, tenants and PMs, vendors, and who is on call when.

A property manager's system exports it as CSV files (``maestro directory import``); maestro keeps
it in DynamoDB and reads it on every package: phone → person (the ``parties`` projection), a
property → its vendors by trade, a property → its on-call PM at a time. Pure models and pure
queries here; the stores are adapters.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.models import Party, PartyRole

__all__ = [
    "ALL_PROPERTIES",
    "Directory",
    "OnCall",
    "Person",
    "PersonRole",
    "Property",
    "Trade",
    "Unit",
    "Vendor",
    "on_call_at",
    "vendors_for",
]

ALL_PROPERTIES = "*"
"""A vendor serving, or an on-call shift covering, every property."""

_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$"
_LANGUAGE = r"^[a-z]{2}$"


class Trade(StrEnum):
    """What a vendor does: a closed list, so dispatch never matches on free text."""

    PLUMBING = "plumbing"
    ELECTRICAL = "electrical"
    HVAC = "hvac"
    APPLIANCE = "appliance"
    PEST = "pest"
    LOCKSMITH = "locksmith"
    ROOFING = "roofing"
    GENERAL = "general"


class Property(Frozen):
    property_id: str = Field(pattern=_ID)
    name: str = Field(min_length=1)
    address: str = ""
    timezone: str = "UTC"
    # The property's own dispatch amounts (docs/directory.md), over the account's policy:
    # None keeps the account's.
    approval_over_usd: int | None = Field(
        default=None, ge=0, description="A PM approves a job whose NTE is over this (USD)"
    )
    nte_usd: int | None = Field(
        default=None, ge=0, description="Not to exceed for every job here, any priority (USD)"
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(
                f"unknown time zone {value!r} (an IANA name such as America/Chicago)"
            ) from error
        return value


class Unit(Frozen):
    unit_id: str = Field(pattern=_ID)
    property_id: str = Field(pattern=_ID)
    label: str = Field(min_length=1)


class PersonRole(StrEnum):
    TENANT = "tenant"
    PM = "pm"


class Person(Frozen):
    """A tenant (of one unit) or a property manager (of some properties), by one or more phones."""

    person_id: str = Field(pattern=_ID)
    role: PersonRole
    name: str = ""
    phones: tuple[E164, ...] = Field(min_length=1)
    unit_id: str | None = None
    property_ids: tuple[str, ...] = ()
    language: str | None = Field(
        default=None, pattern=_LANGUAGE, description="None: taken from their message"
    )
    sms_consent: bool = True

    @model_validator(mode="after")
    def _role_fields(self) -> Person:
        if self.role is PersonRole.TENANT and not self.unit_id:
            raise ValueError("a tenant needs a unit_id")
        if self.role is PersonRole.PM and self.unit_id:
            raise ValueError("a property manager has properties, not a unit")
        if ALL_PROPERTIES in self.property_ids:
            # A PM acts on the WOs of the properties listed (their contexts are those
            # properties' open WOs): every property is listed by name. Someone paged for every
            # property is an on-call shift with property '*'.
            raise ValueError(
                "a person's property_ids list properties by id ('*' is for vendors and on-call "
                "shifts)"
            )
        if len(set(self.phones)) != len(self.phones):
            raise ValueError("a phone is listed twice")
        return self


class Vendor(Frozen):
    vendor_id: str = Field(pattern=_ID)
    name: str = Field(min_length=1)
    phone: E164
    trades: tuple[Trade, ...] = Field(min_length=1)
    property_ids: tuple[str, ...] = Field(
        default=(ALL_PROPERTIES,), min_length=1, description="Served properties, or ('*',): all"
    )
    rank: int = Field(default=1, ge=1, description="Preference: 1 is asked first")
    after_hours: bool = False

    def serves(self, property_id: str | None) -> bool:
        return ALL_PROPERTIES in self.property_ids or (
            property_id is not None and property_id in self.property_ids
        )


class OnCall(Frozen):
    """A PM on call for one property (or ``*``: every property), ``starts_at`` to ``ends_at``."""

    property_id: str
    person_id: str = Field(pattern=_ID)
    starts_at: AwareDatetime
    ends_at: AwareDatetime

    @model_validator(mode="after")
    def _ordered(self) -> OnCall:
        if self.ends_at <= self.starts_at:
            raise ValueError("ends_at must be after starts_at")
        return self

    def covers(self, property_id: str | None, at: datetime) -> bool:
        return (
            self.property_id == ALL_PROPERTIES or self.property_id == property_id
        ) and self.starts_at <= at < self.ends_at


class Directory(Frozen):
    """A whole directory: what an import folder holds, and what an export writes."""

    properties: tuple[Property, ...] = ()
    units: tuple[Unit, ...] = ()
    people: tuple[Person, ...] = ()
    vendors: tuple[Vendor, ...] = ()
    on_call: tuple[OnCall, ...] = ()

    def parties(self) -> tuple[Party, ...]:
        """The phone → party projection the webhook and the pipeline read: one per phone."""
        units = {u.unit_id: u for u in self.units}
        out: list[Party] = []
        for person in self.people:
            unit = units.get(person.unit_id) if person.unit_id else None
            if person.role is PersonRole.TENANT:
                role, label = PartyRole.TENANT, unit.label if unit else person.unit_id
                property_ids: tuple[str, ...] = (unit.property_id,) if unit else ()
            else:
                role, label, property_ids = PartyRole.PM, None, person.property_ids
            out.extend(
                Party(
                    party_id=person.person_id,
                    role=role,
                    phone=phone,
                    name=person.name,
                    unit=label,
                    property_ids=property_ids,
                    language=person.language,
                    sms_consent=person.sms_consent,
                )
                for phone in person.phones
            )
        out.extend(
            Party(
                party_id=vendor.vendor_id,
                role=PartyRole.VENDOR,
                phone=vendor.phone,
                name=vendor.name,
                property_ids=vendor.property_ids,
            )
            for vendor in self.vendors
        )
        return tuple(out)


def on_call_at(shifts: Iterable[OnCall], property_id: str | None, at: datetime) -> OnCall | None:
    """The shift covering ``property_id`` at ``at``: the property's own before an all-properties
    one; among overlapping shifts of the same scope, the one that started last (a swap)."""
    covering = [s for s in shifts if s.covers(property_id, at)]
    if not covering:
        return None
    return max(covering, key=lambda s: (s.property_id != ALL_PROPERTIES, s.starts_at))


def vendors_for(
    vendors: Iterable[Vendor], property_id: str | None, trade: Trade, *, after_hours: bool = False
) -> list[Vendor]:
    """The vendors of ``trade`` serving ``property_id``, by preference rank (then id, stable);
    after hours, only those who take after-hours calls."""
    found = [
        v
        for v in vendors
        if trade in v.trades and v.serves(property_id) and (v.after_hours or not after_hours)
    ]
    return sorted(found, key=lambda v: (v.rank, v.vendor_id))
