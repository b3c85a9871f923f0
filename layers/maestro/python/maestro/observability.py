"""One place for logging, tracing and metrics (Powertools), shared by every handler.

Logger carries the package id as correlation id; Tracer traces the handlers; Metrics counts
packages by route, actions by lane, abstentions, fallbacks, escalations and model tokens, as
CloudWatch embedded metric format. Locally the stack turns tracing and metrics output off.

Every log line is masked on its way out (:class:`MaskingFormatter`): phone numbers keep their
last 4 digits, and the values of body-like keys ("body", "text", …) and the inputs pydantic
quotes in its errors are erased, in the message, the extra keys and the exception text alike.

The Tracer is built on the first invocation, not at import: constructing one imports the X-Ray
SDK and its recorder (about 100 ms) even when tracing is disabled, and a cold start should pay
only for what its first request runs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from maestro.domain.privacy import mask_log

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer
    from aws_lambda_powertools.logging.types import LogRecord

SERVICE = "maestro"
NAMESPACE = "Maestro"
DAILY_CAP_METRIC = "DailyCapReached"
"""Count it, ``count(DAILY_CAP_METRIC)`` without dimensions of its own, each time an
account-wide daily cap (pages, texts, model calls) turns something away or degrades it: the
stack alarms on its first datapoint (``daily-cap`` in ``infra/observability.py``)."""
STRANDED_METRIC = "StrandedFlushes"
"""Packages the stranded sweep flushed (their flush never came on its own): alarmed."""
UNDELIVERABLE_PAGE_METRIC = "UndeliverablePages"
"""A page with no one to go to (no on-call PM, no default PM, no fallback number: docs/on-call.md),
recorded instead of sent: the ``undeliverable-pages`` alarm fires on its first datapoint."""
FALLBACK_DRAINED_METRIC = "FallbackDrained"
"""Webhooks Twilio's fallback URL kept, stored by the drain."""
FALLBACK_REFUSED_METRIC = "FallbackRefused"
"""Webhooks the fallback edge kept and the inbound route refused (a forgery, a bad form)."""


class MaskingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON formatter, masking phone numbers and what people wrote (see
    ``maestro.domain.privacy``) in every field just before the line is serialized."""

    def serialize(self, log: LogRecord) -> str:
        return super().serialize(mask_log(log))


logger = Logger(service=SERVICE, logger_formatter=MaskingFormatter())
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


class LazyTracer:
    """Powertools' ``Tracer``, constructed when a decorated handler first runs.

    ``capture_lambda_handler`` decorates at import as Powertools' does; the real decorator is
    applied on the first call and reused by the warm container.
    """

    def __init__(self, service: str) -> None:
        self._service = service
        self._tracer: Tracer | None = None

    @property
    def built(self) -> bool:
        return self._tracer is not None

    def get(self) -> Tracer:
        if self._tracer is None:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer(service=self._service)
        return self._tracer

    def capture_lambda_handler(
        self, *, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Callable[[_Handler], _Handler]:
        def decorate(handler: _Handler) -> _Handler:
            traced: Callable[..., Any] | None = None

            @functools.wraps(handler)
            def run(event: Any, context: Any) -> Any:
                nonlocal traced
                if traced is None:
                    traced = self.get().capture_lambda_handler(
                        handler, capture_response=capture_response, capture_error=capture_error
                    )
                return traced(event, context)

            return cast(_Handler, run)  # same signature as ``handler``

        return decorate


tracer = LazyTracer(SERVICE)


def count(name: str, value: float = 1, **dimensions: str) -> None:
    """Add one metric datapoint, with optional dimensions of its own (a separate EMF blob)."""
    if os.environ.get("POWERTOOLS_METRICS_DISABLED", "").lower() == "true":
        return  # the embedded stack: no EMF lines on the console
    if not dimensions:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
        return
    with single_metric(
        name=name, unit=MetricUnit.Count, value=value, namespace=NAMESPACE
    ) as metric:
        for key, dim in dimensions.items():
            metric.add_dimension(name=key, value=dim)


__all__ = [
    "DAILY_CAP_METRIC",
    "FALLBACK_DRAINED_METRIC",
    "FALLBACK_REFUSED_METRIC",
    "STRANDED_METRIC",
    "UNDELIVERABLE_PAGE_METRIC",
    "LazyTracer",
    "MaskingFormatter",
    "count",
    "logger",
    "metrics",
    "tracer",
]
