"""The party directory on DynamoDB: phone (E.164) → party.

Apart from the other memory adapters because the inbound webhook needs it on every text: it
loads the party model alone, not the decision records and actions those adapters store.
"""

from __future__ import annotations

from collections.abc import Iterable

from maestro.adapters.ddb import (
    DynamoDBClient,
    batch_write,
    consistent_get,
    from_item,
    load_model,
    model_item,
    query_all,
    scan_all,
    to_value,
)
from maestro.domain.models import Party
from maestro.ports.stores import PartyDirectory
from maestro.tables import PARTIES

__all__ = ["DynamoPartyDirectory"]

_BY_PARTY_ID = next(index for index in PARTIES.indexes if index.name == "by_party_id")


class DynamoPartyDirectory(PartyDirectory):
    """Phone (E.164) → party. ``put`` overwrites: the directory is maintained, not appended."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def by_phone(self, phone: str) -> Party | None:
        item = consistent_get(self._client, self._table, {PARTIES.partition.name: phone})
        return load_model(Party, item) if item else None

    def by_party_id(self, party_id: str) -> Party | None:
        for item in query_all(
            self._client,
            TableName=self._table,
            IndexName=_BY_PARTY_ID.name,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": _BY_PARTY_ID.partition.name},
            ExpressionAttributeValues={":pk": to_value(party_id)},
        ):
            # The index may lag: confirm with a consistent read by phone.
            return self.by_phone(str(from_item(item)[PARTIES.partition.name]))
        return None

    def put(self, party: Party) -> None:
        self._client.put_item(TableName=self._table, Item=model_item(party))

    def write(self, puts: Iterable[Party], delete_phones: Iterable[str] = ()) -> int:
        """Batched: put ``puts`` (overwriting by phone) and delete the rows of ``delete_phones``;
        the requests sent."""
        return batch_write(
            self._client,
            self._table,
            (model_item(party) for party in puts),
            ({PARTIES.partition.name: to_value(phone)} for phone in delete_phones),
        )

    def all_by_phone(self) -> dict[str, Party]:
        """Every row, by phone (a paged scan: the importer's read, not the webhook's)."""
        found: dict[str, Party] = {}
        for item in scan_all(self._client, TableName=self._table, ConsistentRead=True):
            party = load_model(Party, item)
            found[party.phone] = party
        return found
