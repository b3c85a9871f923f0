"""Cold start (#11): what importing a Lambda handler loads, checked in a fresh interpreter.

Structural facts only (which modules are loaded, which patterns compiled), never timings: the
timings are `make bench`'s (benchmarks/bench_imports.py). Each handler is imported as the Lambda
runtime imports it: ``functions/<name>`` and the layer on the path, no settings in the
environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = sorted(p.parent.name for p in (ROOT / "functions").glob("*/handler.py"))

# Never at import, in any handler: the model SDK (only a configured key loads it), the X-Ray SDK
# (the tracer is built on the first invocation) and the dev package.
NEVER = ("anthropic", "aws_xray_sdk", "maestro_dev")
# The inbound webhook answers every text: none of the brain, the pipeline, the lanes, the
# decision records or the flusher.
NOT_INBOUND = (
    "maestro.brain",
    "maestro.pipeline",
    "maestro.lanes",
    "maestro.domain.records",
    "maestro.domain.actions",
    "maestro.domain.memory",
    "maestro.ingest.flusher",
    "maestro.adapters.dynamodb_decisions",
    "maestro.adapters.dynamodb_pending",
    "maestro.adapters.dynamodb_state",
    "maestro.adapters.dynamodb_timeline",
    "maestro.adapters.dynamodb_work_orders",
)
# The flusher flushes and starts executions: without a model key it runs no brain stage.
NOT_FLUSHER = ("maestro.brain.stage_models", "maestro.brain.offline", "maestro.pipeline.shared")

_PROBE = textwrap.dedent(
    """
    import json, sys
    import handler
    from maestro.domain import safety, safety_rules
    print(json.dumps({
        "modules": sorted(sys.modules),
        "floor_patterns_compiled": safety_rules.compiled.cache_info().currsize,
        "handler": callable(handler.handler),
    }))
    """
)


def _imported(name: str) -> dict[str, object]:
    keep = ("PATH", "HOME", "LANG", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "functions" / name), str(ROOT / "layers" / "maestro" / "python")]
    )
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _loaded(modules: object, prefixes: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.parametrize("name", HANDLERS)
def test_no_handler_imports_the_model_sdk_the_xray_sdk_or_compiles_the_floor(name: str) -> None:
    found = _imported(name)
    assert found["handler"] is True
    assert _loaded(found["modules"], NEVER) == []
    # The floor's patterns compile on its first call, not at import.
    assert found["floor_patterns_compiled"] == 0


def test_the_inbound_webhook_loads_neither_the_brain_nor_the_pipeline() -> None:
    found = _imported("inbound_sms")
    assert _loaded(found["modules"], NOT_INBOUND) == []
    # What it does load, so the check above is not vacuous.
    assert _loaded(found["modules"], ("maestro.ingest.webhooks", "maestro.domain.safety"))


def test_the_flusher_loads_no_brain_stage() -> None:
    found = _imported("flusher")
    assert _loaded(found["modules"], NOT_FLUSHER) == []
    assert _loaded(found["modules"], ("maestro.ingest.flusher",))
