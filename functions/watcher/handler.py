"""SQS watcher queue (EventBridge rule: every domain event) → the watcher (partial failures)."""

from maestro.verify.entry import watcher_handler as handler

__all__ = ["handler"]
