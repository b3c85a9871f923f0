"""The append-only decision log on DynamoDB (``maestro.tables.DECISIONS``): decisions, action
outcomes, package completions and sweep marks.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from maestro.adapters.ddb import DynamoDBClient, from_item, to_item, to_value
from maestro.adapters.ddb import consistent_get as _get
from maestro.adapters.ddb import query_all as _query
from maestro.adapters.dynamodb_writes import conditional_put, index_named, sort_key_name, sort_time
from maestro.domain.records import (
    ActionOutcomeRecord,
    MaestroDecision,
    PackageCompletion,
    SweepMark,
    outcome_record_prefix,
)
from maestro.ports.stores import AlreadyExistsError, DecisionLog
from maestro.tables import (
    COMPLETION_SHARDS,
    DECISIONS,
    RETENTION_DAYS,
    TTL_ATTRIBUTE,
    completion_day_key,
    completion_day_keys,
    expires_at_epoch,
)

__all__ = ["DynamoDecisionLog"]

# Attributes that are not a key: the record's JSON dump and its kind.
_DOC = "doc"
_RECORD = "record"


class DynamoDecisionLog(DecisionLog):
    """The append-only MaestroDecision log.

    There is deliberately no update or delete: ``append`` is a put-if-absent, so a re-executed
    package writing the same deterministic decision id is refused, never overwrites.
    """

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        *,
        retention_days: int = RETENTION_DAYS["decisions"],
        completion_shards: int = COMPLETION_SHARDS,
    ) -> None:
        self._retention_days = retention_days
        self._shards = completion_shards
        self._client = client
        self._table = table_name
        self._pk = DECISIONS.partition.name
        self._sk = sort_key_name(DECISIONS)
        self._by_conversation = index_named(DECISIONS, "by_conversation")
        self._by_completion_day = index_named(DECISIONS, "completions_by_day")

    def append(self, decision: MaestroDecision) -> None:
        conv_index = self._by_conversation
        item: dict[str, Any] = {
            self._pk: decision.package_id,
            self._sk: decision.decision_id,
            _RECORD: "decision",
            conv_index.partition.name: decision.conversation_id,
            # decision_id breaks ties between decisions recorded in the same microsecond.
            sort_key_name(conv_index): f"{sort_time(decision.recorded_at)}#{decision.decision_id}",
            _DOC: decision.model_dump_json(),
            TTL_ATTRIBUTE: expires_at_epoch(decision.recorded_at, self._retention_days),
        }
        self._put_once(item)

    def record_outcome(self, outcome: ActionOutcomeRecord) -> bool:
        # No conversation index attributes: outcomes stay out of ``recent`` (a sparse index).
        return self._append_other(outcome.package_id, outcome.record_id, "outcome", outcome)

    def complete(self, completion: PackageCompletion) -> bool:
        at = completion.recorded_at.astimezone(UTC)
        by_day = self._by_completion_day
        return self._append_other(
            completion.package_id,
            completion.record_id,
            "completion",
            completion,
            **{
                by_day.partition.name: completion_day_key(
                    at.date(), completion.package_id, self._shards
                ),
                sort_key_name(by_day): f"{sort_time(at)}#{completion.package_id}",
            },
        )

    def completed_between(
        self,
        start: datetime,
        end: datetime,
        *,
        after: SweepMark | None = None,
        limit: int | None = None,
        unsharded: bool = True,
    ) -> list[PackageCompletion]:
        """Packages completed in [start, end) and past ``after``, oldest first, at most
        ``limit``: one Query per UTC day and shard, and the unsharded day unless told otherwise
        (eventually consistent: an index cannot be read otherwise), each from the mark on, so
        nothing before it is read again; the answers merged in the index's order."""
        low = sort_time(start)
        if after is not None and after.recorded_at >= start:
            low = f"{sort_time(after.recorded_at)}#{after.package_id}"
        found: list[PackageCompletion] = []
        day = max(start, after.recorded_at if after else start).astimezone(UTC).date()
        while day <= end.astimezone(UTC).date() and (limit is None or len(found) < limit):
            wanted = None if limit is None else limit - len(found)
            days: list[PackageCompletion] = []
            for key in completion_day_keys(day, self._shards, unsharded=unsharded):
                days += self._completed_in(key, low, start, end, after, wanted)
            days.sort(key=lambda c: (c.recorded_at, c.package_id))
            found += days[:wanted]
            day += timedelta(days=1)
        return found

    def _completed_in(
        self,
        partition: str,
        low: str,
        start: datetime,
        end: datetime,
        after: SweepMark | None,
        limit: int | None,
    ) -> list[PackageCompletion]:
        """The first ``limit`` completions of one partition of the index in range, past the mark."""
        by_day = self._by_completion_day
        found: list[PackageCompletion] = []
        for item in _query(
            self._client,
            TableName=self._table,
            IndexName=by_day.name,
            KeyConditionExpression="#day = :day AND #key BETWEEN :low AND :end",
            ExpressionAttributeNames={"#day": by_day.partition.name, "#key": sort_key_name(by_day)},
            ExpressionAttributeValues={
                ":day": to_value(partition),
                ":low": to_value(low),
                ":end": to_value(sort_time(end)),
            },
            **({"Limit": limit + 1} if limit is not None else {}),  # +1: the mark itself
        ):
            completion = PackageCompletion.model_validate_json(self._doc(item))
            if not start <= completion.recorded_at < end:
                continue
            if after is not None and after.passed(completion):
                continue  # BETWEEN is inclusive: the mark's own line
            found.append(completion)
            if limit is not None and len(found) >= limit:
                break
        return found

    def outcomes_for(
        self, package_id: str, *, consistent: bool = True
    ) -> list[ActionOutcomeRecord]:
        # Only the outcome lines (their ids share a prefix): not the decisions beside them.
        found = [
            ActionOutcomeRecord.model_validate_json(self._doc(item))
            for item in _query(
                self._client,
                TableName=self._table,
                KeyConditionExpression="#pk = :pk AND begins_with(#sk, :outcome)",
                ExpressionAttributeNames={"#pk": self._pk, "#sk": self._sk},
                ExpressionAttributeValues={
                    ":pk": to_value(package_id),
                    ":outcome": to_value(outcome_record_prefix(package_id)),
                },
                ConsistentRead=consistent,
            )
            if from_item({_RECORD: item[_RECORD]})[_RECORD] == "outcome"
        ]
        return sorted(found, key=lambda o: o.index)

    def completion_for(self, package_id: str) -> PackageCompletion | None:
        for item in self._package_items(package_id):
            if from_item({_RECORD: item[_RECORD]})[_RECORD] == "completion":
                return PackageCompletion.model_validate_json(self._doc(item))
        return None

    def _append_other(
        self,
        package_id: str,
        record_id: str,
        kind: str,
        record: ActionOutcomeRecord | PackageCompletion,
        **extra: str,
    ) -> bool:
        try:
            self._put_once(
                {
                    self._pk: package_id,
                    self._sk: record_id,
                    _RECORD: kind,
                    _DOC: record.model_dump_json(),
                    TTL_ATTRIBUTE: expires_at_epoch(record.recorded_at, self._retention_days),
                    **extra,
                }
            )
        except AlreadyExistsError:
            return False
        return True

    def _put_once(self, item: dict[str, Any]) -> None:
        conditional_put(
            self._client,
            self._table,
            to_item(item),
            "attribute_not_exists(#pk)",
            {"#pk": self._pk},
            None,
            AlreadyExistsError,
        )

    def _package_items(self, package_id: str) -> Iterator[dict[str, Any]]:
        yield from _query(
            self._client,
            TableName=self._table,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": self._pk},
            ExpressionAttributeValues={":pk": to_value(package_id)},
            ConsistentRead=True,
        )

    @staticmethod
    def _doc(item: dict[str, Any]) -> str:
        return str(from_item({_DOC: item[_DOC]})[_DOC])

    def get(self, package_id: str, decision_id: str) -> MaestroDecision | None:
        item = _get(self._client, self._table, {self._pk: package_id, self._sk: decision_id})
        return self._decode(item) if item else None

    def for_package(self, package_id: str) -> list[MaestroDecision]:
        decisions = [
            self._decode(item)
            for item in self._package_items(package_id)
            # Items written before outcomes existed carry no record kind: they are decisions.
            if _RECORD not in item or from_item({_RECORD: item[_RECORD]})[_RECORD] == "decision"
        ]
        # The table sorts by decision id (a string); callers want the decisions' own order.
        return sorted(decisions, key=lambda d: (d.index, d.recorded_at, d.decision_id))

    def recent(self, conversation_id: str, limit: int) -> list[MaestroDecision]:
        """The conversation's last ``limit`` decisions, oldest first."""
        if limit <= 0:
            return []
        newest_first: list[MaestroDecision] = []
        # A GSI cannot be read consistently; the log is append-only, so lag only hides the
        # newest decisions for a moment, never shows a changed one.
        for item in _query(
            self._client,
            TableName=self._table,
            IndexName=self._by_conversation.name,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": self._by_conversation.partition.name},
            ExpressionAttributeValues={":pk": to_value(conversation_id)},
            ScanIndexForward=False,
            Limit=limit,
        ):
            newest_first.append(self._decode(item))
            if len(newest_first) >= limit:
                break
        return newest_first[::-1]

    @staticmethod
    def _decode(item: dict[str, Any]) -> MaestroDecision:
        return MaestroDecision.model_validate_json(from_item({_DOC: item[_DOC]})[_DOC])
