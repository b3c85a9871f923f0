"""Turn a model's raw answer into a BrainSample, classifying every way it can be wrong.

The model's text is untrusted: it is parsed as JSON, validated against the closed vocabulary,
and on any failure kept as a *failed* sample (which dilutes consensus) rather than dropped.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from maestro.domain.actions import ActionPlan, Lane
from maestro.domain.records import BrainSample, SampleFailure

_LANES = {lane.value for lane in Lane}


def sample_from_text(
    index: int, text: str, *, model: str, input_tokens: int = 0, output_tokens: int = 0
) -> BrainSample:
    """Parse one answer of the shape ``{"actions": [...]}`` into a BrainSample."""

    def failed(failure: SampleFailure, detail: str) -> BrainSample:
        return BrainSample(
            index=index,
            failure=failure,
            detail=detail[:500],
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        return failed("non_json", str(exc))
    try:
        plan = ActionPlan.model_validate(data)
    except ValidationError as exc:
        # A lane outside the closed vocabulary is its own kind of failure: worth counting.
        return failed(
            "out_of_vocabulary" if _lanes_named(data) - _LANES else "schema_failure", _short(exc)
        )
    return BrainSample(
        index=index,
        actions=plan.actions,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _lanes_named(data: object) -> set[str]:
    if not isinstance(data, dict) or not isinstance(data.get("actions"), list):
        return set()
    return {str(a.get("lane")) for a in data["actions"] if isinstance(a, dict)}


def _short(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{exc.error_count()} error(s); first at {where}: {first['msg']}"[:500]
