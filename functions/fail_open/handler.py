"""Step Functions task: fail_open (see maestro.pipeline.fail_open)."""

from maestro.pipeline.entry import fail_open as handler

__all__ = ["handler"]
