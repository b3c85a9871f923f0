"""A pydantic JSON schema made compact for a model's tool: the same constraints, fewer tokens.

A forced tool's schema is sent with every call (docs/model-cost.md), so what only a reader of
the code needs is left out: titles (derived from the field names), defaults (the parser fills
them in), a class's docstring, pydantic's ``discriminator`` annotation (the ``const`` of each
variant says the same) and ``$ref`` indirection for a definition used once. A field that
several objects declare alike (the action's ``confidence``, ``why``...) is declared once, in
``$defs`` under its own name. What constrains a value stays: types, enums, consts, bounds,
``required``, ``additionalProperties``, and the descriptions written for the model (a field's
``description``).

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["compact_schema"]

_DROPPED = frozenset({"title", "default", "discriminator"})
_REF_PREFIX = "#/$defs/"


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (as pydantic generates it) with the same constraints in fewer characters."""
    definitions: dict[str, Any] = schema.get("$defs", {})
    uses = Counter(_refs(schema))
    kept = {name for name, count in uses.items() if count > 1}
    body = {key: value for key, value in schema.items() if key != "$defs"}
    compact = _compact(body, definitions, kept)
    shared = {name: _compact(definitions[name], definitions, kept) for name in sorted(kept)}
    compact, hoisted = _hoist_repeated_fields(compact, set(shared))
    shared |= hoisted
    if shared:
        compact["$defs"] = shared
    return compact


_MIN_REPEATS = 3


def _hoist_repeated_fields(
    schema: dict[str, Any], taken: set[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each field declared alike in several objects, declared once in ``$defs`` (its name
    kept, so a ref reads as the field it stands for) and referred to where it was."""
    counts = Counter(_field_declarations(schema))
    hoisted: dict[str, Any] = {}
    by_declaration: dict[tuple[str, str], str] = {}
    for (name, declared), count in counts.items():
        ref = {"$ref": _REF_PREFIX + name}
        if count < _MIN_REPEATS or name in taken or name in hoisted:
            continue
        if len(declared) <= len(json.dumps(ref, separators=(",", ":"))):
            continue
        hoisted[name] = json.loads(declared)
        by_declaration[(name, declared)] = name
    return _refer(schema, by_declaration), hoisted


def _field_declarations(node: Any) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            found.append((name, json.dumps(sub, sort_keys=True, separators=(",", ":"))))
        for value in node.values():
            found += _field_declarations(value)
    elif isinstance(node, list):
        for item in node:
            found += _field_declarations(item)
    return found


def _refer(node: Any, by_declaration: dict[tuple[str, str], str]) -> Any:
    if isinstance(node, list):
        return [_refer(item, by_declaration) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            fields: dict[str, Any] = {}
            for name, sub in value.items():
                declared = json.dumps(sub, sort_keys=True, separators=(",", ":"))
                hoisted = by_declaration.get((name, declared))
                fields[name] = (
                    {"$ref": _REF_PREFIX + hoisted} if hoisted else _refer(sub, by_declaration)
                )
            out[key] = fields
        else:
            out[key] = _refer(value, by_declaration)
    return out


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"].removeprefix(_REF_PREFIX)] if "$ref" in node else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    return []


def _compact(node: Any, definitions: dict[str, Any], kept: set[str]) -> Any:
    if isinstance(node, list):
        return [_compact(item, definitions, kept) for item in node]
    if not isinstance(node, dict):
        return int(node) if isinstance(node, float) and node.is_integer() else node
    ref = node.get("$ref", "").removeprefix(_REF_PREFIX)
    if ref and ref not in kept:
        # A definition used once is inlined; the referring node's own keywords win.
        merged = {**definitions[ref], **{k: v for k, v in node.items() if k != "$ref"}}
        return _compact(merged, definitions, kept)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "description" and "properties" in node:
            continue  # a class docstring, written for the code's readers
        if key == "properties":
            out[key] = {name: _compact(sub, definitions, kept) for name, sub in value.items()}
        else:
            out[key] = _compact(value, definitions, kept)
    if "const" in out:
        out.pop("type", None)  # a const says its type
    return _nullable(out)


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [X, {"type": "null"}]`` as X whose type also admits null (one schema, not two)."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = next(option for option in options if option != {"type": "null"})
    kind = other.get("type", "object" if "properties" in other else None)
    if not isinstance(kind, str) or "anyOf" in other or "oneOf" in other:
        return node
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    return {**other, "type": [kind, "null"], **rest}


def encoded_size(schema: dict[str, Any]) -> int:
    """The characters the schema takes in a request body (compact JSON)."""
    return len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False))
