"""Step Functions task: step_gate (see maestro.pipeline.steps)."""

from maestro.pipeline.entry import step_gate as handler

__all__ = ["handler"]
