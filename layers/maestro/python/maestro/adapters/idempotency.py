"""The act step's idempotency store: Powertools' DynamoDB persistence layer whose in-progress
records know the write that made them.

Powertools starts an idempotent call with a conditional put of an INPROGRESS record. When that
put applies and its answer is lost (a 500, a dropped connection), the SDK sends it again; the
retry fails its condition against the very record it wrote, and Powertools reads that record as
another run's (``IdempotencyAlreadyInProgressError``): the action would fail open although no
other run exists. Here every put carries a fresh owner token, and a put that fails its condition
against a record holding its own token met its own write: it succeeded. A second run writes
another token, so it is still refused while the first one is in progress.
"""

from __future__ import annotations

import uuid
from typing import Any, cast

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
from botocore.exceptions import ClientError

from maestro.adapters.ddb import DynamoDBClient, is_conditional_failure

__all__ = ["OWNER_ATTRIBUTE", "OwnedDynamoDBPersistenceLayer"]

OWNER_ATTRIBUTE = "owner"
"""The record's attribute holding the token of the put that wrote it."""


class OwnedDynamoDBPersistenceLayer(DynamoDBPersistenceLayer):
    """:class:`DynamoDBPersistenceLayer` whose puts are :class:`_OwnedPuts`."""

    def __init__(self, table_name: str, boto3_client: DynamoDBClient) -> None:
        super().__init__(table_name=table_name, boto3_client=boto3_client)
        # Stands in for the client: every call but put_item passes through unchanged.
        self.client = cast("DynamoDBClient", _OwnedPuts(self.client, self.key_attr))


class _OwnedPuts:
    """The DynamoDB client as the persistence layer sees it: ``put_item`` stamps the item with
    a token of its own and takes a condition failure against that same token for the success it
    was; every other call goes to the client unchanged."""

    def __init__(self, client: Any, key_attr: str) -> None:
        self._client = client
        self._key_attr = key_attr

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_item(self, **kwargs: Any) -> Any:
        token = uuid.uuid4().hex
        item = {**kwargs["Item"], OWNER_ATTRIBUTE: {"S": token}}
        try:
            return self._client.put_item(**{**kwargs, "Item": item})
        except ClientError as error:
            if is_conditional_failure(error) and self._owner(error, kwargs) == token:
                return {}  # the SDK's retry met this put's own write: it applied
            raise

    def _owner(self, error: ClientError, kwargs: dict[str, Any]) -> str | None:
        """The token on the record the put failed against: from the failure's ``Item``
        (ReturnValuesOnConditionCheckFailure), else read back."""
        found: Any = error.response.get("Item")
        if found is None:
            key = {self._key_attr: kwargs["Item"][self._key_attr]}
            found = self._client.get_item(
                TableName=kwargs["TableName"], Key=key, ConsistentRead=True
            ).get("Item")
        owner = (found or {}).get(OWNER_ATTRIBUTE, {}).get("S")
        return str(owner) if owner is not None else None
