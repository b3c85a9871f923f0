"""Step Functions task: precheck (see maestro.pipeline.precheck)."""

from maestro.pipeline.entry import precheck as handler

__all__ = ["handler"]
