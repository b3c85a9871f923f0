"""What the session's synthesis produced, for the infra tests (the fixtures are in conftest)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The jsii kernel runs on Node; the machine's Node 20 is past its end of life for jsii, which
# says so on every start. The tests do not need the banner.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

Template = dict[str, Any]


@dataclass(frozen=True)
class Synth:
    outdir: Path
    templates: dict[str, Template]  # env name → template
    seconds: float
    stderr: str

    def resources(self, env: str, kind: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.templates[env]["Resources"].items() if r["Type"] == kind}


def cdk_environments() -> list[str]:
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    return list(context["maestro:environments"])
