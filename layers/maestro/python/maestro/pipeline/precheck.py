"""Safety first, before the lease: the deterministic floor, then (when plugged in) the cheap model.

See :mod:`maestro.pipeline.shared` for the order of the steps, and why.
"""

from __future__ import annotations

from maestro.brain.precheck import package_safety_hit
from maestro.brain.precheck import precheck as run_precheck
from maestro.observability import count, logger
from maestro.pipeline.contract import ExecutionState, dump
from maestro.pipeline.shared import JSON, Pipeline, Step


def precheck(pipeline: Pipeline, s: ExecutionState) -> JSON:
    """Safety first, before the lease: the floor, then (when plugged in) the cheap model.
    A one-message package that the severity probe already read takes the probe's answer:
    the same question is not asked twice."""
    package = pipeline.load_package(s)
    probed = package.messages[0].probe if len(package.messages) == 1 else None
    triage = pipeline.deps.models.triage
    known = _known(pipeline, package.sender_phone) if triage is not None else True
    if not known:
        # A number nobody knows costs no model call: the deterministic floor alone decides
        # (an emergency still escalates at once); anything else goes to the hour's digest.
        triage = None
    if probed is not None and package_safety_hit(package) is None:
        result = probed
    else:
        result = run_precheck(package, triage.precheck if triage is not None else None)
        if triage is not None and package_safety_hit(package) is None:
            count("ModelCalls", 1, stage="precheck")
    if known is None and result.source != "safety_floor":
        # The directory could not be read: the default stands in for the model, recorded.
        result = result.model_copy(update={"fallback": True})
    count("PackagesByRoute", route=result.route.value)
    return dump(result)


def _known(pipeline: Pipeline, phone: str) -> bool | None:
    """Whether the directory has ``phone``; None when it cannot be read (an outage through
    every retry): the pre-check then goes on with the floor alone, recorded as a fallback,
    as when the model's budget cannot be read. Safety first never waits on the directory."""
    try:
        known = pipeline.deps.parties.by_phone(phone) is not None
    except Exception as error:  # any failure of the read: the floor still decides
        count("DirectoryUnread", stage="precheck")
        logger.warning(
            "pre-check: the directory could not be read", extra={"error": str(error)[:200]}
        )
        return None
    if not known:
        count("UnknownSenderPackages")
    return known


STEP = Step(precheck, ExecutionState)
"""The precheck step; its input validated as :class:`ExecutionState` by the handler factory."""
