"""One place for logging, tracing and metrics (Powertools), shared by every handler.

Logger carries the package id as correlation id; Tracer traces the handlers; Metrics counts
packages by route, actions by lane, abstentions, fallbacks, escalations and model tokens, as
CloudWatch embedded metric format. Locally the stack turns tracing and metrics output off.
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit, single_metric

SERVICE = "maestro"
NAMESPACE = "Maestro"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)


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


__all__ = ["count", "logger", "metrics", "tracer"]
