"""Erase a person from every table (docs/erase-and-retention.md): the one sanctioned rewrite.

Given a phone number or a person/party id, :class:`DynamoEraser` finds what names the person
(their numbers, party and person ids, conversation ids, package ids) and what they wrote (the
bodies of their inbound messages), then walks every table in ``maestro.tables.ALL_TABLES`` and
applies the rules of :mod:`maestro.domain.erasure` item by item: items keyed by their number are
deleted, their buffered messages are deleted, every other item is redacted in place (its keys
kept, so the decision log keeps its rows, ids, lanes and times). Last, their directory rows and
their phone → party rows go.

The order makes a crashed erase safe to run again: the stores it learns the person's words from
(the messages table, the conversation buffer) and the rows it learns who they are from (the
directory, the parties table) are rewritten last, so a second run still knows what to look for.
A finished erase run again finds nothing and changes nothing.

A scan of every table: an operator's rare request, not a pipeline read. Works the same against
the embedded stack and a deployed one (given a boto3 DynamoDB client and the table names).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel, ConfigDict, Field

from maestro.adapters.ddb import DynamoDBClient, from_item, query_all, scan_all, to_value
from maestro.adapters.dynamodb_directory import DynamoDirectory
from maestro.adapters.dynamodb_parties import DynamoPartyDirectory
from maestro.domain.directory import Person, Vendor
from maestro.domain.erasure import ERASED, ErasureScope
from maestro.domain.models import conversation_id_for
from maestro.domain.privacy import mask_phone_numbers
from maestro.observability import logger
from maestro.tables import (
    ALL_TABLES,
    CONVERSATIONS,
    DECISIONS,
    DIRECTORY,
    MESSAGES,
    PARTIES,
    TableSpec,
)

__all__ = ["DynamoEraser", "EraseReport", "NothingToEraseError"]

_E164 = re.compile(r"^\+[1-9]\d{6,14}$")
_BY_CONVERSATION = next(i for i in DECISIONS.indexes if i.name == "by_conversation")
# Rewritten last (see the module's docstring), in this order.
_LAST = (MESSAGES.logical_name, CONVERSATIONS.logical_name, DIRECTORY.logical_name)
_FINAL = PARTIES.logical_name

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


class NothingToEraseError(LookupError):
    """An id that names no person and no party: nothing can be looked for."""


class EraseReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject: str = Field(description="What was asked for (a number is shown masked)")
    person_ids: list[str] = Field(description="The person and party ids erased")
    phones: int = Field(description="How many phone numbers were looked for")
    bodies: int = Field(description="How many of their texts were looked for")
    packages: int = Field(description="How many of their packages' records were redacted")
    deleted: dict[str, int] = Field(description="Items deleted, by table")
    redacted: dict[str, int] = Field(description="Items rewritten, by table")

    @property
    def changed(self) -> bool:
        return bool(sum(self.deleted.values()) + sum(self.redacted.values()))


class DynamoEraser:
    """``tables``: logical name → table name, for every table in ``ALL_TABLES`` (an erase that
    skipped a table would say it erased what it did not)."""

    def __init__(self, client: DynamoDBClient, tables: Mapping[str, str]) -> None:
        missing = sorted({spec.logical_name for spec in ALL_TABLES} - set(tables))
        if missing:
            raise ValueError(f"an erase needs every table; not given: {', '.join(missing)}")
        self._client = client
        self._tables = dict(tables)
        self._parties = DynamoPartyDirectory(client, tables[PARTIES.logical_name])
        self._directory = DynamoDirectory(client, tables[DIRECTORY.logical_name])

    # -- who ------------------------------------------------------------------------------------

    def _people(self, phones: set[str], ids: set[str]) -> list[Person | Vendor]:
        """Directory people and vendors with one of ``phones`` or ``ids`` (a directory scan)."""
        directory = self._directory.snapshot()
        people: list[Person | Vendor] = [
            person
            for person in directory.people
            if person.person_id in ids or phones & set(person.phones)
        ]
        people += [v for v in directory.vendors if v.vendor_id in ids or v.phone in phones]
        return people

    def scope_of(self, who: str) -> tuple[ErasureScope, list[Person | Vendor]]:
        """Everything that names ``who`` (an E.164 number or a person/party id), and what they
        wrote. A number nobody knows still has a conversation to erase; an unknown id has none."""
        who = who.strip()
        phones: set[str] = set()
        ids: set[str] = set()
        if who.startswith("+"):
            if not _E164.match(who):
                raise ValueError(f"{mask_phone_numbers(who)} is not an E.164 number (+15551234567)")
            phones.add(who)
        else:
            ids.add(who)
            party = self._parties.by_party_id(who)
            if party is not None:
                phones.add(party.phone)
        people = self._people(phones, ids)
        for person in people:
            if isinstance(person, Vendor):
                phones.add(person.phone)
                ids.add(person.vendor_id)
            else:
                phones.update(person.phones)
                ids.add(person.person_id)
        for phone in sorted(phones):
            party = self._parties.by_phone(phone)
            if party is not None:
                ids.add(party.party_id)
        if not phones:
            raise NothingToEraseError(f"no person or party {who!r}: nothing to erase")
        conversations = sorted({conversation_id_for(phone) for phone in phones})
        packages: set[str] = set()
        bodies: set[str] = set()
        for conversation_id in conversations:
            for item in self._conversation_items(conversation_id):
                if item.get("package_id"):
                    packages.add(str(item["package_id"]))
                bodies.update(_body_of(item))
            packages.update(self._logged_packages(conversation_id))
        bodies.update(self._inbound_bodies(set(conversations)))
        scope = ErasureScope(
            phones=tuple(sorted(phones)),
            party_ids=tuple(sorted(ids)),
            conversation_ids=tuple(conversations),
            package_ids=tuple(sorted(packages)),
            bodies=tuple(sorted(bodies)),
        )
        return scope, people

    def _conversation_items(self, conversation_id: str) -> Iterator[dict[str, Any]]:
        for item in query_all(
            self._client,
            TableName=self._tables[CONVERSATIONS.logical_name],
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": CONVERSATIONS.partition.name},
            ExpressionAttributeValues={":pk": to_value(conversation_id)},
            ConsistentRead=True,
        ):
            yield from_item(item)

    def _logged_packages(self, conversation_id: str) -> set[str]:
        return {
            str(from_item(item)[DECISIONS.partition.name])
            for item in query_all(
                self._client,
                TableName=self._tables[DECISIONS.logical_name],
                IndexName=_BY_CONVERSATION.name,
                KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": _BY_CONVERSATION.partition.name},
                ExpressionAttributeValues={":pk": to_value(conversation_id)},
            )
        }

    def _inbound_bodies(self, conversations: set[str]) -> set[str]:
        bodies: set[str] = set()
        for item in self._scan(MESSAGES):
            data = from_item(item)
            if data.get("conversation_id") in conversations:
                bodies.update(_body_of(data))
        return bodies

    # -- erase ----------------------------------------------------------------------------------

    def erase(self, who: str) -> EraseReport:
        scope, people = self.scope_of(who)
        deleted: Counter[str] = Counter()
        redacted: Counter[str] = Counter()
        order = [s for s in ALL_TABLES if s.logical_name not in (*_LAST, _FINAL)]
        order += [s for name in (*_LAST, _FINAL) for s in ALL_TABLES if s.logical_name == name]
        for spec in order:
            if spec is DIRECTORY:
                deleted[spec.logical_name] += self._erase_directory_rows(scope, people)
            for item in list(self._scan(spec)):
                outcome = self._erase_item(spec, item, scope)
                if outcome == "deleted":
                    deleted[spec.logical_name] += 1
                elif outcome == "redacted":
                    redacted[spec.logical_name] += 1
        report = EraseReport(
            subject=mask_phone_numbers(who),
            person_ids=list(scope.party_ids),
            phones=len(scope.phones),
            bodies=len(scope.bodies),
            packages=len(scope.package_ids),
            deleted={k: v for k, v in sorted(deleted.items()) if v},
            redacted={k: v for k, v in sorted(redacted.items()) if v},
        )
        logger.info(
            "person erased",
            extra={
                "person_ids": report.person_ids,
                "deleted": report.deleted,
                "redacted": report.redacted,
            },
        )
        return report

    def _erase_directory_rows(self, scope: ErasureScope, people: list[Person | Vendor]) -> int:
        """Their person (or vendor) rows and their on-call shifts (a shift pages the person it
        names). A vendor's rows go whole: a vendor row without its number could not be read."""
        removed = 0
        snapshot = self._directory.snapshot()
        for person in people:
            self._directory.delete(person)
            removed += 1
        for shift in snapshot.on_call:
            if shift.person_id in scope.party_ids:
                self._directory.delete(shift)
                removed += 1
        return removed

    def _scan(self, spec: TableSpec) -> Iterator[dict[str, Any]]:
        table = self._tables[spec.logical_name]
        return scan_all(self._client, TableName=table, ConsistentRead=True)

    def _erase_item(self, spec: TableSpec, item: dict[str, Any], scope: ErasureScope) -> str:
        """What became of one item: "deleted", "redacted" or "kept"."""
        table = self._tables[spec.logical_name]
        key_names = [spec.partition.name, *([spec.sort.name] if spec.sort else [])]
        key = {name: item[name] for name in key_names}
        values = {name: _deserializer.deserialize(v) for name, v in item.items()}
        if scope.key_names_them(values[name] for name in key_names) or _buffered_by_them(
            spec, values, scope
        ):
            self._client.delete_item(TableName=table, Key=key)
            return "deleted"
        linked = scope.links(values)
        sets: dict[str, Any] = {}
        removes: list[str] = []
        for name, value in values.items():
            if name in key_names:
                continue
            if spec is CONVERSATIONS and name == "sender_phone" and value in scope.phones:
                removes.append(name)  # the meta's number: set again by their next text
                continue
            result = scope.redact(value, linked=linked)
            if result.changed:
                sets[name] = result.value
        if not sets and not removes:
            return "kept"
        names = {f"#a{i}": name for i, name in enumerate([*sets, *removes])}
        by_name = {name: alias for alias, name in names.items()}
        expression = []
        if sets:
            expression.append(
                "SET " + ", ".join(f"{by_name[n]} = :v{i}" for i, n in enumerate(sets))
            )
        if removes:
            expression.append("REMOVE " + ", ".join(by_name[n] for n in removes))
        arguments: dict[str, Any] = {
            "TableName": table,
            "Key": key,
            "UpdateExpression": " ".join(expression),
            "ExpressionAttributeNames": {**names, "#k": key_names[0]},
            # Rewrites what is there, never brings back an item deleted meanwhile.
            "ConditionExpression": "attribute_exists(#k)",
        }
        if sets:
            arguments["ExpressionAttributeValues"] = {
                f":v{i}": _serializer.serialize(v) for i, v in enumerate(sets.values())
            }
        try:
            self._client.update_item(**arguments)
        except self._client.exceptions.ConditionalCheckFailedException:
            return "kept"
        return "redacted"


def _body_of(item: Mapping[str, Any]) -> set[str]:
    """The body of a stored message item, unless an earlier erase replaced it."""
    body = (item.get("message") or {}).get("body")
    return {str(body)} if body and body != ERASED else set()


def _buffered_by_them(spec: TableSpec, values: Mapping[str, Any], scope: ErasureScope) -> bool:
    """A message of theirs in the conversation buffer: deleted, not redacted (the buffer is a
    queue, and the decision log keeps what was decided about it)."""
    return (
        spec is CONVERSATIONS
        and values.get(CONVERSATIONS.partition.name) in scope.conversation_ids
        and str(values.get(CONVERSATIONS.sort_name, "")).startswith("msg#")
    )
