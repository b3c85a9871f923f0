"""Step Functions task: step_gate (see maestro.pipeline.step_gate)."""

from maestro.pipeline.entry import step_gate as handler

__all__ = ["handler"]
