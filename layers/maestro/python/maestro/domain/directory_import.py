"""A directory import, pure: CSV rows → a validated :class:`Directory` or every error, and the plan
that turns the stored directory into the desired one (docs/directory.md).

The files are read by the ``maestro directory`` command (devtools); here they are tables of text
cells. A row is numbered as a spreadsheet shows it: the header is row 1, the first record row 2.
Nothing here writes: :func:`plan_import` says what an apply would put and delete.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from maestro.domain.common import Frozen
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
from maestro.domain.models import Party

__all__ = [
    "COLUMNS",
    "FILES",
    "CsvTable",
    "EntityChange",
    "ImportPlan",
    "Problem",
    "Validated",
    "check_directory",
    "directory_tables",
    "entity_id",
    "find",
    "plan_import",
    "validate_tables",
]

LIST_SEPARATOR = ";"
_TRUE = frozenset({"yes", "y", "true", "1"})
_FALSE = frozenset({"no", "n", "false", "0"})

COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "properties.csv": (
        ("property_id", "name"),
        ("address", "timezone", "approval_over_usd", "nte_usd"),
    ),
    "units.csv": (("unit_id", "property_id", "label"), ()),
    "people.csv": (
        ("person_id", "role", "name", "phones"),
        ("unit_id", "property_ids", "language", "sms_consent"),
    ),
    "vendors.csv": (
        ("vendor_id", "name", "phone", "trades"),
        ("property_ids", "rank", "after_hours"),
    ),
    "on_call.csv": (("property_id", "person_id", "starts_at", "ends_at"), ()),
}
"""Each file's (required, optional) columns, in the order an export writes them."""
FILES = tuple(COLUMNS)

Kind = Literal["property", "unit", "person", "vendor", "on_call"]
_FILE_OF: dict[Kind, str] = {
    "property": "properties.csv",
    "unit": "units.csv",
    "person": "people.csv",
    "vendor": "vendors.csv",
    "on_call": "on_call.csv",
}


class Problem(Frozen):
    """An error (the import is refused) or a warning (reported, the import goes on)."""

    severity: Literal["error", "warning"]
    file: str
    row: int | None = None
    column: str | None = None
    message: str

    def line(self) -> str:
        where = self.file
        if self.row is not None:
            where += f" row {self.row}"
        if self.column:
            where += f", column {self.column}"
        return f"{self.severity}: {where}: {self.message}"


class CsvTable(Frozen):
    """One file as read: its header and its records (each a column → cell mapping)."""

    header: tuple[str, ...]
    rows: tuple[dict[str, str], ...] = ()


class Validated(Frozen):
    """The folder's directory when it has no error (``directory`` is None otherwise)."""

    directory: Directory | None
    errors: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()


# -- rows → models ---------------------------------------------------------------------------


def _split(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(LIST_SEPARATOR) if part.strip()]


class _RowError(ValueError):
    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column = column


def _flag(cells: Mapping[str, str], column: str, default: bool) -> bool:
    value = cells.get(column, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise _RowError(column, f"expected yes or no, got {value!r}")


def _optional(cells: Mapping[str, str], column: str) -> str | None:
    return cells.get(column, "").strip() or None


def _dollars(cells: Mapping[str, str], column: str) -> int | None:
    """Whole US dollars ("500", "$1,200"), or None for a blank cell (the account's policy)."""
    text = _optional(cells, column)
    if text is None:
        return None
    digits = text.removeprefix("$").replace(",", "")
    if not digits.isdigit():
        raise _RowError(column, f"expected whole US dollars such as 500, got {text!r}")
    return int(digits)


def _property_row(cells: Mapping[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "property_id": cells["property_id"].strip(),
        "name": cells["name"].strip(),
        "address": cells.get("address", "").strip(),
        "approval_over_usd": _dollars(cells, "approval_over_usd"),
        "nte_usd": _dollars(cells, "nte_usd"),
    }
    if zone := _optional(cells, "timezone"):
        data["timezone"] = zone
    return data


def _unit_row(cells: Mapping[str, str]) -> dict[str, Any]:
    return {key: cells[key].strip() for key in ("unit_id", "property_id", "label")}


def _person_row(cells: Mapping[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "person_id": cells["person_id"].strip(),
        "role": cells["role"].strip().lower(),
        "name": cells["name"].strip(),
        "phones": tuple(_split(cells["phones"])),
        "unit_id": _optional(cells, "unit_id"),
        "property_ids": tuple(_split(cells.get("property_ids", ""))),
        "sms_consent": _flag(cells, "sms_consent", True),
    }
    if language := _optional(cells, "language"):
        data["language"] = language.lower()
    return data


def _trades(cell: str) -> tuple[Trade, ...]:
    names = _split(cell.lower())
    unknown = [name for name in names if name not in Trade.__members__.values()]
    if unknown:
        known = ", ".join(t.value for t in Trade)
        raise _RowError("trades", f"unknown trade {', '.join(map(repr, unknown))} (one of {known})")
    return tuple(Trade(name) for name in names)


def _vendor_row(cells: Mapping[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "vendor_id": cells["vendor_id"].strip(),
        "name": cells["name"].strip(),
        "phone": cells["phone"].strip(),
        "trades": _trades(cells["trades"]),
        "after_hours": _flag(cells, "after_hours", False),
    }
    if served := _split(cells.get("property_ids", "")):
        data["property_ids"] = tuple(served)
    if rank := _optional(cells, "rank"):
        if not rank.isdigit():
            raise _RowError("rank", f"rank must be a whole number from 1, got {rank!r}")
        data["rank"] = int(rank)
    return data


def _instant(cells: Mapping[str, str], column: str) -> datetime:
    text = cells[column].strip()
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise _RowError(column, f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise _RowError(column, f"{text!r} has no UTC offset (e.g. 2026-01-05T18:00:00-06:00)")
    return value


def _on_call_row(cells: Mapping[str, str]) -> dict[str, Any]:
    starts, ends = _instant(cells, "starts_at"), _instant(cells, "ends_at")
    return {
        "property_id": cells["property_id"].strip(),
        "person_id": cells["person_id"].strip(),
        "starts_at": starts,
        "ends_at": ends,
    }


_ROW_READERS: dict[str, tuple[type[BaseModel], Callable[[Mapping[str, str]], dict[str, Any]]]] = {
    "properties.csv": (Property, _property_row),
    "units.csv": (Unit, _unit_row),
    "people.csv": (Person, _person_row),
    "vendors.csv": (Vendor, _vendor_row),
    "on_call.csv": (OnCall, _on_call_row),
}


def _column_of(file: str, error: Any) -> str | None:
    """The column a model's validation error is about (a whole-row rule names its column)."""
    location = error.get("loc") or ()
    if location:
        return str(location[0])
    message = str(error.get("msg", ""))
    if file == "on_call.csv":
        return "ends_at"
    if file == "people.csv":
        return "phones" if "phone" in message else "unit_id"
    return None


def _clean(message: str) -> str:
    return message.removeprefix("Value error, ")


_ID_COLUMN = {
    "properties.csv": "property_id",
    "units.csv": "unit_id",
    "people.csv": "person_id",
    "vendors.csv": "vendor_id",
}


def _read_table(
    file: str, table: CsvTable, problems: list[Problem], unreadable: set[str]
) -> list[tuple[int, Any]]:
    """The rows that make a model, numbered; the errors of the others go to ``problems`` and
    their ids to ``unreadable`` (so a reference to them is not reported a second time)."""
    required, optional = COLUMNS[file]
    missing = [column for column in required if column not in table.header]
    for column in missing:
        problems.append(
            Problem(severity="error", file=file, row=1, column=column, message="missing column")
        )
    for column in table.header:
        if column not in required and column not in optional:
            problems.append(
                Problem(
                    severity="warning",
                    file=file,
                    row=1,
                    column=column,
                    message="unknown column, ignored",
                )
            )
    if missing:
        return []
    model, reader = _ROW_READERS[file]
    out: list[tuple[int, Any]] = []
    for index, cells in enumerate(table.rows):
        row = index + 2
        if file in _ID_COLUMN:
            unreadable.add(cells.get(_ID_COLUMN[file], "").strip())
        try:
            out.append((row, model.model_validate(reader(cells))))
        except _RowError as error:
            problems.append(
                Problem(
                    severity="error", file=file, row=row, column=error.column, message=str(error)
                )
            )
        except ValidationError as error:
            # One error a cell: a bad phone in a list is also "the list is empty" to pydantic.
            by_column: dict[str | None, str] = {}
            for detail in error.errors(include_url=False):
                by_column.setdefault(_column_of(file, detail), _clean(detail["msg"]))
            problems.extend(
                Problem(severity="error", file=file, row=row, column=column, message=message)
                for column, message in by_column.items()
            )
    return out


def validate_tables(tables: Mapping[str, CsvTable]) -> Validated:
    """The folder's files (by name; an absent file is an empty one, with a warning) → its
    directory, or every error in it."""
    problems: list[Problem] = []
    for name in sorted(set(tables) - set(FILES)):
        problems.append(
            Problem(severity="warning", file=name, message="not a directory file, ignored")
        )
    rows: dict[str, list[tuple[int, Any]]] = {}
    unreadable: dict[str, set[str]] = {file: set() for file in FILES}
    for file in FILES:
        table = tables.get(file)
        if table is None:
            problems.append(
                Problem(
                    severity="warning",
                    file=file,
                    message="no such file: read as empty (with --prune its rows would go)",
                )
            )
            rows[file] = []
            continue
        rows[file] = _read_table(file, table, problems, unreadable[file])
        # What was read is not unreadable: only the ids of rows that made no model stay.
        unreadable[file] -= {entity_id(model) for _, model in rows[file]}
    problems.extend(_cross_check(rows, unreadable))
    errors = tuple(p for p in problems if p.severity == "error")
    warnings = tuple(p for p in problems if p.severity == "warning")
    if errors:
        return Validated(directory=None, errors=errors, warnings=warnings)
    directory = Directory(
        properties=tuple(m for _, m in rows["properties.csv"]),
        units=tuple(m for _, m in rows["units.csv"]),
        people=tuple(m for _, m in rows["people.csv"]),
        vendors=tuple(m for _, m in rows["vendors.csv"]),
        on_call=tuple(m for _, m in rows["on_call.csv"]),
    )
    return Validated(directory=directory, warnings=warnings)


def check_directory(directory: Directory) -> list[Problem]:
    """The cross-row rules over a whole directory (rows numbered as an export would write them):
    what an operator route re-checks before applying a directory it was sent."""
    return _cross_check(
        {
            "properties.csv": list(enumerate(directory.properties, start=2)),
            "units.csv": list(enumerate(directory.units, start=2)),
            "people.csv": list(enumerate(directory.people, start=2)),
            "vendors.csv": list(enumerate(directory.vendors, start=2)),
            "on_call.csv": list(enumerate(directory.on_call, start=2)),
        }
    )


def _cross_check(
    rows: Mapping[str, Sequence[tuple[int, Any]]],
    unreadable: Mapping[str, set[str]] | None = None,
) -> list[Problem]:
    problems: list[Problem] = []
    skipped = unreadable or {}

    def refused(file: str, key: str) -> bool:
        """A row already reported as an error: a reference to it is not a second error."""
        return key in skipped.get(file, set())

    def error(file: str, row: int, column: str, message: str) -> None:
        problems.append(
            Problem(severity="error", file=file, row=row, column=column, message=message)
        )

    def unique(file: str, column: str, id_of: Callable[[Any], str]) -> dict[str, Any]:
        seen: dict[str, int] = {}
        models: dict[str, Any] = {}
        for row, model in rows[file]:
            key = id_of(model)
            if key in seen:
                error(file, row, column, f"duplicate id {key!r} (first on row {seen[key]})")
                continue
            seen[key] = row
            models[key] = model
        return models

    properties = unique("properties.csv", "property_id", lambda p: p.property_id)
    units = unique("units.csv", "unit_id", lambda u: u.unit_id)
    people = unique("people.csv", "person_id", lambda p: p.person_id)
    vendors = unique("vendors.csv", "vendor_id", lambda v: v.vendor_id)

    def known_properties(file: str, row: int, ids: Iterable[str], *, star: bool) -> None:
        for property_id in ids:
            if property_id == ALL_PROPERTIES and star:
                continue
            if property_id not in properties and not refused("properties.csv", property_id):
                error(file, row, "property_ids", f"unknown property {property_id!r}")

    for row, unit in rows["units.csv"]:
        if unit.property_id not in properties and not refused("properties.csv", unit.property_id):
            error("units.csv", row, "property_id", f"unknown property {unit.property_id!r}")

    # One phone, one party: the webhook binds a text by its phone alone.
    phone_owner: dict[str, str] = {}

    def owns(file: str, row: int, column: str, phone: str, owner: str) -> None:
        if phone in phone_owner and phone_owner[phone] != owner:
            error(file, row, column, f"phone {phone} is also {phone_owner[phone]}'s")
        else:
            phone_owner.setdefault(phone, owner)

    for row, person in rows["people.csv"]:
        if person.person_id in vendors:
            error("people.csv", row, "person_id", f"id {person.person_id!r} is also a vendor's")
        if (
            person.unit_id
            and person.unit_id not in units
            and not refused("units.csv", person.unit_id)
        ):
            error("people.csv", row, "unit_id", f"unknown unit {person.unit_id!r}")
        known_properties("people.csv", row, person.property_ids, star=False)
        for phone in person.phones:
            owns("people.csv", row, "phones", phone, f"person {person.person_id}")
    for row, vendor in rows["vendors.csv"]:
        known_properties("vendors.csv", row, vendor.property_ids, star=True)
        owns("vendors.csv", row, "phone", vendor.phone, f"vendor {vendor.vendor_id}")

    by_scope: dict[str, list[tuple[int, OnCall]]] = defaultdict(list)
    for row, shift in rows["on_call.csv"]:
        if (
            shift.property_id != ALL_PROPERTIES
            and shift.property_id not in properties
            and not refused("properties.csv", shift.property_id)
        ):
            error("on_call.csv", row, "property_id", f"unknown property {shift.property_id!r}")
        person = people.get(shift.person_id)
        if person is None and refused("people.csv", shift.person_id):
            pass
        elif person is None:
            error("on_call.csv", row, "person_id", f"unknown person {shift.person_id!r}")
        elif person.role is not PersonRole.PM:
            error("on_call.csv", row, "person_id", f"{shift.person_id!r} is not a pm")
        by_scope[shift.property_id].append((row, shift))
    # Two shifts of one scope at once leave "who is on call" to a tie-break nobody chose.
    for scope in by_scope.values():
        ordered = sorted(scope, key=lambda item: item[1].starts_at)
        for (before_row, before), (row, shift) in pairwise(ordered):
            if shift.starts_at < before.ends_at:
                error(
                    "on_call.csv",
                    row,
                    "starts_at",
                    f"overlaps the {before.property_id} shift on row {before_row} "
                    f"({before.person_id} until {before.ends_at.isoformat()})",
                )
    return sorted(problems, key=lambda p: (FILES.index(p.file), p.row or 0))


# -- Directory → rows (export) ---------------------------------------------------------------


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _amount(value: int | None) -> str:
    return "" if value is None else str(value)


def directory_tables(directory: Directory) -> dict[str, CsvTable]:
    """The directory as the import files: what ``maestro directory export`` writes."""

    def table(file: str, rows: Iterable[dict[str, str]]) -> CsvTable:
        required, optional = COLUMNS[file]
        return CsvTable(header=required + optional, rows=tuple(rows))

    join = LIST_SEPARATOR.join
    return {
        "properties.csv": table(
            "properties.csv",
            (
                {
                    "property_id": p.property_id,
                    "name": p.name,
                    "address": p.address,
                    "timezone": p.timezone,
                    "approval_over_usd": _amount(p.approval_over_usd),
                    "nte_usd": _amount(p.nte_usd),
                }
                for p in directory.properties
            ),
        ),
        "units.csv": table(
            "units.csv",
            (
                {"unit_id": u.unit_id, "property_id": u.property_id, "label": u.label}
                for u in directory.units
            ),
        ),
        "people.csv": table(
            "people.csv",
            (
                {
                    "person_id": p.person_id,
                    "role": p.role.value,
                    "name": p.name,
                    "phones": join(p.phones),
                    "unit_id": p.unit_id or "",
                    "property_ids": join(p.property_ids),
                    "language": p.language or "",
                    "sms_consent": _yes(p.sms_consent),
                }
                for p in directory.people
            ),
        ),
        "vendors.csv": table(
            "vendors.csv",
            (
                {
                    "vendor_id": v.vendor_id,
                    "name": v.name,
                    "phone": v.phone,
                    "trades": join(t.value for t in v.trades),
                    "property_ids": join(v.property_ids),
                    "rank": str(v.rank),
                    "after_hours": _yes(v.after_hours),
                }
                for v in directory.vendors
            ),
        ),
        "on_call.csv": table(
            "on_call.csv",
            (
                {
                    "property_id": s.property_id,
                    "person_id": s.person_id,
                    "starts_at": s.starts_at.isoformat(),
                    "ends_at": s.ends_at.isoformat(),
                }
                for s in directory.on_call
            ),
        ),
    }


# -- the plan --------------------------------------------------------------------------------

Entity = Property | Unit | Person | Vendor | OnCall


def entity_id(entity: Entity) -> str:
    """What names an entity across imports (a shift: its scope, PM and start)."""
    match entity:
        case Property():
            return entity.property_id
        case Unit():
            return entity.unit_id
        case Person():
            return entity.person_id
        case Vendor():
            return entity.vendor_id
        case OnCall():
            return f"{entity.property_id}@{entity.starts_at.isoformat()}#{entity.person_id}"


def _kind(entity: Entity) -> Kind:
    match entity:
        case Property():
            return "property"
        case Unit():
            return "unit"
        case Person():
            return "person"
        case Vendor():
            return "vendor"
        case OnCall():
            return "on_call"


class EntityChange(Frozen):
    """One entity the plan adds, changes or finds absent (``before`` is the stored one)."""

    kind: Kind
    id: str
    before: Entity | None = None
    after: Entity | None = None

    def line(self) -> str:
        if self.before is None:
            verb = "add"
        elif self.after is None:
            verb = "absent"
        else:
            verb = "change"
        detail = ""
        if self.before is not None and self.after is not None:
            old, new = self.before.model_dump(mode="json"), self.after.model_dump(mode="json")
            fields = [k for k in new if old.get(k) != new[k]]
            detail = " (" + ", ".join(f"{k}: {old.get(k)!r} → {new[k]!r}" for k in fields) + ")"
        return f"{verb:<7}{_FILE_OF[self.kind]} {self.id}{detail}"


class ImportPlan(Frozen):
    """What applying a directory does: the entity adds and changes, those absent from the files
    (deleted only with ``prune``), and the phone → party rows to put and delete."""

    added: tuple[EntityChange, ...] = ()
    changed: tuple[EntityChange, ...] = ()
    unchanged: int = 0
    absent: tuple[EntityChange, ...] = ()
    prune: bool = False
    party_puts: tuple[Party, ...] = ()
    party_deletes: tuple[str, ...] = ()
    conflicts: tuple[Problem, ...] = Field(
        default=(),
        description="What the files clash with among the kept entries: an apply is refused",
    )

    @property
    def changes(self) -> int:
        """Entity writes and deletes (a party row is a projection of them, not counted apart
        unless it alone differs)."""
        pruned = len(self.absent) if self.prune else 0
        entity_changes = len(self.added) + len(self.changed) + pruned
        return entity_changes or len(self.party_puts) + len(self.party_deletes)

    def summary(self) -> str:
        absent = f"{len(self.absent)} absent from the files" + (
            " (pruned)" if self.prune else " (kept; --prune removes them)"
        )
        parties = f"phone rows: {len(self.party_puts)} to put, {len(self.party_deletes)} to delete"
        return (
            f"{self.changes} changes: {len(self.added)} added, {len(self.changed)} changed, "
            f"{self.unchanged} unchanged, {absent}; {parties}"
        )

    def lines(self) -> list[str]:
        return [change.line() for change in (*self.added, *self.changed, *self.absent)]


def _entities(directory: Directory) -> dict[tuple[Kind, str], Entity]:
    every: list[Entity] = [
        *directory.properties,
        *directory.units,
        *directory.people,
        *directory.vendors,
        *directory.on_call,
    ]
    return {(_kind(e), entity_id(e)): e for e in every}


def _rebuild(entities: Iterable[Entity]) -> Directory:
    by_kind: dict[Kind, list[Entity]] = defaultdict(list)
    for entity in entities:
        by_kind[_kind(entity)].append(entity)
    return Directory(
        properties=tuple(by_kind["property"]),  # type: ignore[arg-type]
        units=tuple(by_kind["unit"]),  # type: ignore[arg-type]
        people=tuple(by_kind["person"]),  # type: ignore[arg-type]
        vendors=tuple(by_kind["vendor"]),  # type: ignore[arg-type]
        on_call=tuple(by_kind["on_call"]),  # type: ignore[arg-type]
    )


def plan_import(
    desired: Directory,
    current: Directory,
    stored_parties: Mapping[str, Party],
    *,
    prune: bool = False,
) -> ImportPlan:
    """The diff from ``current`` (the stored directory) and ``stored_parties`` (the phone →
    party rows it projects, by phone) to ``desired``; absent entities stay unless ``prune``.

    A phone row is put when the resulting directory projects it differently from what is stored,
    and deleted when the current directory projected it and the result projects it no more (a
    phone the directory never held, e.g. seeded by hand, is not the importer's to delete).
    """
    want, have = _entities(desired), _entities(current)
    added, changed, absent = [], [], []
    unchanged = 0
    for key, entity in want.items():
        before = have.get(key)
        if before is None:
            added.append(EntityChange(kind=key[0], id=key[1], after=entity))
        elif before != entity:
            changed.append(EntityChange(kind=key[0], id=key[1], before=before, after=entity))
        else:
            unchanged += 1
    for key, entity in have.items():
        if key not in want:
            absent.append(EntityChange(kind=key[0], id=key[1], before=entity))
    kept = [] if prune else [change.before for change in absent if change.before is not None]
    result = _rebuild([*want.values(), *kept])
    conflicts = _conflicts_with_kept(desired, kept)
    projected = {party.phone: party for party in result.parties()}
    party_puts = tuple(
        party for phone, party in projected.items() if stored_parties.get(phone) != party
    )
    party_deletes = tuple(
        sorted(
            party.phone
            for party in current.parties()
            if party.phone not in projected and party.phone in stored_parties
        )
    )
    return ImportPlan(
        added=tuple(added),
        changed=tuple(changed),
        unchanged=unchanged,
        absent=tuple(absent),
        prune=prune,
        party_puts=party_puts,
        party_deletes=party_deletes,
        conflicts=conflicts,
    )


def _conflicts_with_kept(desired: Directory, kept: Sequence[Entity]) -> tuple[Problem, ...]:
    """The files' phones and shifts that clash with entries they do not list but the store
    keeps (no --prune): a phone bound to two parties, two shifts of one scope at once."""
    problems: list[Problem] = []
    hint = "stored and absent from the files (--prune removes it)"
    kept_phones: dict[str, str] = {}
    for entity in kept:
        if isinstance(entity, Person):
            kept_phones |= dict.fromkeys(entity.phones, f"person {entity.person_id}")
        elif isinstance(entity, Vendor):
            kept_phones[entity.phone] = f"vendor {entity.vendor_id}"
    for row, person in enumerate(desired.people, start=2):
        for phone in person.phones:
            if phone in kept_phones:
                problems.append(
                    Problem(
                        severity="error",
                        file="people.csv",
                        row=row,
                        column="phones",
                        message=f"phone {phone} is also {kept_phones[phone]}'s, {hint}",
                    )
                )
    for row, vendor in enumerate(desired.vendors, start=2):
        if vendor.phone in kept_phones:
            problems.append(
                Problem(
                    severity="error",
                    file="vendors.csv",
                    row=row,
                    column="phone",
                    message=f"phone {vendor.phone} is also {kept_phones[vendor.phone]}'s, {hint}",
                )
            )
    kept_shifts = [entity for entity in kept if isinstance(entity, OnCall)]
    for row, shift in enumerate(desired.on_call, start=2):
        for other in kept_shifts:
            if (
                other.property_id == shift.property_id
                and shift.starts_at < other.ends_at
                and other.starts_at < shift.ends_at
            ):
                problems.append(
                    Problem(
                        severity="error",
                        file="on_call.csv",
                        row=row,
                        column="starts_at",
                        message=f"overlaps the {other.property_id} shift of {other.person_id} "
                        f"from {other.starts_at.isoformat()}, {hint}",
                    )
                )
    return tuple(problems)


def find(directory: Directory, key: str) -> list[Entity]:
    """The entities an id or a phone names (``maestro directory show``)."""
    found: list[Entity] = []
    for entity in _entities(directory).values():
        if (
            entity_id(entity) == key
            or (isinstance(entity, Person) and key in entity.phones)
            or (isinstance(entity, Vendor) and key == entity.phone)
            or (isinstance(entity, OnCall) and key == entity.person_id)
        ):
            found.append(entity)
    return found
