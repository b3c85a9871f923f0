"""SQS wo-start queue (EventBridge rule: wo.created) → a WO's execution (partial failures)."""

from maestro.dispatch.starter import wo_start_handler as handler

__all__ = ["handler"]
