"""The directory on DynamoDB (one table, ``maestro.tables.DIRECTORY``).

Item layout (pk / sk):
- ``property#P`` / ``property``, ``unit#U`` / ``unit``, ``person#ID`` / ``person``,
  ``vendor#ID`` / ``vendor``: one item per entity, its fields as attributes;
- ``oncall#P`` / ``<starts_at>#<person_id>``: a shift, so "P's shifts" is one query (P may be
  ``*``);
- ``cover#P#trade`` / ``<rank>#<vendor_id>``: a vendor's coverage, one row per served property
  (or ``*``) and trade, carrying the vendor's fields, so "P's plumbers by rank" is one query;
- ``pm#P`` / ``<person_id>``: a PM's row per managed property (or ``*``), carrying the PM's
  fields, so "P's PMs" (a page's default PM, docs/on-call.md) is one query.

Phone → party is not here: it is the ``parties`` table, which the importer writes from the
same directory.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from maestro.adapters.ddb import (
    DynamoDBClient,
    batch_write,
    consistent_get,
    load_model,
    model_item,
    query_all,
    scan_all,
    to_value,
)
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
    on_call_at,
    vendors_for,
)
from maestro.ports.stores import DirectoryReader
from maestro.tables import DIRECTORY

__all__ = ["DirectoryEntity", "DynamoDirectory", "entity_keys", "model_key"]

DirectoryEntity = Property | Unit | Person | Vendor | OnCall
_PK, _SK = DIRECTORY.partition.name, DIRECTORY.sort_name


def _shift_sort(shift: OnCall) -> str:
    return f"{shift.starts_at.isoformat()}#{shift.person_id}"


def _cover_keys(vendor: Vendor) -> list[dict[str, str]]:
    return [
        {_PK: f"cover#{prop}#{trade.value}", _SK: f"{vendor.rank:05d}#{vendor.vendor_id}"}
        for prop in vendor.property_ids
        for trade in vendor.trades
    ]


def _manager_keys(person: Person) -> list[dict[str, str]]:
    if person.role is not PersonRole.PM:
        return []
    return [{_PK: f"pm#{prop}", _SK: person.person_id} for prop in person.property_ids]


def entity_keys(entity: DirectoryEntity) -> list[dict[str, str]]:
    """Every item key ``entity`` is stored under (the first is its own item)."""
    match entity:
        case Property():
            return [{_PK: f"property#{entity.property_id}", _SK: "property"}]
        case Unit():
            return [{_PK: f"unit#{entity.unit_id}", _SK: "unit"}]
        case Person():
            return [{_PK: f"person#{entity.person_id}", _SK: "person"}, *_manager_keys(entity)]
        case Vendor():
            return [{_PK: f"vendor#{entity.vendor_id}", _SK: "vendor"}, *_cover_keys(entity)]
        case OnCall():
            return [{_PK: f"oncall#{entity.property_id}", _SK: _shift_sort(entity)}]


_KINDS: dict[str, type[BaseModel]] = {
    "property": Property,
    "unit": Unit,
    "person": Person,
    "vendor": Vendor,
    "oncall": OnCall,
}


class DynamoDirectory(DirectoryReader):
    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    # -- reads the pipeline makes ------------------------------------------------------------

    def _get(self, cls: type[Any], pk: str, sk: str) -> Any:
        item = consistent_get(self._client, self._table, {_PK: pk, _SK: sk})
        return load_model(cls, item) if item else None

    def person(self, person_id: str) -> Person | None:
        found: Person | None = self._get(Person, f"person#{person_id}", "person")
        return found

    def vendor(self, vendor_id: str) -> Vendor | None:
        found: Vendor | None = self._get(Vendor, f"vendor#{vendor_id}", "vendor")
        return found

    def property(self, property_id: str) -> Property | None:
        found: Property | None = self._get(Property, f"property#{property_id}", "property")
        return found

    def unit(self, unit_id: str) -> Unit | None:
        found: Unit | None = self._get(Unit, f"unit#{unit_id}", "unit")
        return found

    def _partition(self, pk: str, **condition: Any) -> list[dict[str, Any]]:
        return list(
            query_all(
                self._client,
                TableName=self._table,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": _PK},
                ExpressionAttributeValues={":pk": to_value(pk)},
                ConsistentRead=True,
                **condition,
            )
        )

    def on_call_at(self, property_id: str | None, at: datetime) -> OnCall | None:
        scopes = [ALL_PROPERTIES] if property_id is None else [property_id, ALL_PROPERTIES]
        shifts = [
            load_model(OnCall, item)
            for scope in scopes
            for item in self._partition(f"oncall#{scope}")
        ]
        return on_call_at(shifts, property_id, at)

    def managers_of(self, property_id: str | None) -> list[Person]:
        if property_id is None:
            return []  # a PM manages the properties they list, never "every property"
        found = (load_model(Person, item) for item in self._partition(f"pm#{property_id}"))
        return sorted(found, key=lambda p: p.person_id)

    def vendors_for(
        self, property_id: str | None, trade: Trade, *, after_hours: bool = False
    ) -> list[Vendor]:
        scopes = [ALL_PROPERTIES] if property_id is None else [property_id, ALL_PROPERTIES]
        found = {
            vendor.vendor_id: vendor
            for scope in scopes
            for vendor in (
                load_model(Vendor, item) for item in self._partition(f"cover#{scope}#{trade.value}")
            )
        }
        return vendors_for(found.values(), property_id, trade, after_hours=after_hours)

    # -- writes (the importer's) -------------------------------------------------------------

    def put(self, entity: DirectoryEntity) -> None:
        """Store ``entity`` (overwrites); a vendor's coverage rows and a PM's property rows
        follow its current fields."""
        previous: Vendor | Person | None = None
        if isinstance(entity, Vendor):
            previous = self.vendor(entity.vendor_id)
        elif isinstance(entity, Person):
            previous = self.person(entity.person_id)
        if previous is not None:
            for key in entity_keys(previous)[1:]:
                self._client.delete_item(TableName=self._table, Key=model_key(key))
        for key in entity_keys(entity):
            self._client.put_item(
                TableName=self._table, Item=model_item(entity, kind=_kind_of(entity), **key)
            )

    def delete(self, entity: DirectoryEntity) -> None:
        """Remove ``entity`` and every row derived from it (as stored, not as given)."""
        stored = entity
        if isinstance(entity, Vendor):
            stored = self.vendor(entity.vendor_id) or entity
        elif isinstance(entity, Person):
            stored = self.person(entity.person_id) or entity
        for key in entity_keys(stored):
            self._client.delete_item(TableName=self._table, Key=model_key(key))

    def write(
        self, puts: Iterable[DirectoryEntity], removes: Iterable[DirectoryEntity] = ()
    ) -> int:
        """Batched: store ``puts`` and remove every row of ``removes`` (entities as stored: a
        deleted one, or the previous version of a changed one, whose derived rows, e.g. a
        vendor's old coverage, go unless a put writes them again); the requests sent."""
        items: dict[tuple[str, str], dict[str, Any]] = {}
        for entity in puts:
            for key in entity_keys(entity):
                items[(key[_PK], key[_SK])] = model_item(entity, kind=_kind_of(entity), **key)
        gone = {
            (key[_PK], key[_SK]): model_key(key)
            for entity in removes
            for key in entity_keys(entity)
            if (key[_PK], key[_SK]) not in items
        }
        return batch_write(self._client, self._table, items.values(), gone.values())

    def snapshot(self) -> Directory:
        """The whole directory as stored (a scan: the importer's and export's read, not the
        pipeline's)."""
        found: dict[str, list[Any]] = {kind: [] for kind in _KINDS}
        for item in scan_all(self._client, TableName=self._table, ConsistentRead=True):
            kind = item.get("kind", {}).get("S")
            pk = item[_PK]["S"]
            # Coverage and PM rows repeat a vendor's or a PM's fields: the entity's own item is
            # the one to read.
            if kind in _KINDS and not pk.startswith(("cover#", "pm#")):
                found[kind].append(load_model(_KINDS[kind], item))
        return Directory(
            properties=tuple(sorted(found["property"], key=lambda p: p.property_id)),
            units=tuple(sorted(found["unit"], key=lambda u: u.unit_id)),
            people=tuple(sorted(found["person"], key=lambda p: p.person_id)),
            vendors=tuple(sorted(found["vendor"], key=lambda v: v.vendor_id)),
            on_call=tuple(sorted(found["oncall"], key=lambda s: (s.property_id, _shift_sort(s)))),
        )


def _kind_of(entity: DirectoryEntity) -> str:
    return "oncall" if isinstance(entity, OnCall) else type(entity).__name__.lower()


def model_key(key: dict[str, str]) -> dict[str, Any]:
    return {name: to_value(value) for name, value in key.items()}
