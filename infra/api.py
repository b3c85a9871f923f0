"""The webhook API: REST API Gateway in front of ``functions/inbound_sms``.

- the five routes the inbound resolver serves, POST only; each requires its signature headers
  at the edge (a request validator), so an unsigned request never reaches Lambda; the handler
  still verifies every signature;
- stage throttling (per environment), JSON access logs, execution logs on errors, X-Ray;
- a web ACL (WAF) in front of the stage, its rules in this order:
  1. a body size limit, the one the handler enforces (``maestro.ingest.webhooks.
     MAX_REQUEST_BYTES``, derived from the longest message it accepts): a 413 for a request whose
     Content-Length could not hold a message the handler would accept (the handler keeps its own
     413s, so the caller still learns why);
  2. AWS's IP reputation list;
  3. a rate limit per source IP address (``webhook_rate_limit_per_ip`` requests in 5 minutes,
     then 429s until its rate falls back);
  4. the signature headers' shapes (``maestro.adapters.webhook_auth.SIGNATURE_HEADER_PATTERNS``,
     translated for WAF's regex engine by :func:`waf_regex`): a 403 for a request to a Twilio
     route without a well-formed ``X-Twilio-Signature``, to an app route without well-formed
     ``X-Maestro-Signature`` and ``X-Maestro-Timestamp``, and to any path without either set.
     Junk never reaches the handler (which checks the same shapes, then the signature).
"""

from __future__ import annotations

import re
from typing import Literal

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.config import EnvConfig
from infra.functions import retention
from maestro.adapters.webhook_auth import SIGNATURE_HEADER_PATTERNS
from maestro.ingest.webhooks import MAX_REQUEST_BYTES

STAGE = "v1"
Auth = Literal["twilio", "app"]
ROUTE_AUTH: dict[str, Auth] = {
    "/twilio/sms": "twilio",
    "/twilio/status": "twilio",
    "/twilio/transcript": "twilio",
    "/app/messages": "app",
    "/assistant/kickoff": "app",
}
"""Route → who signs it: each route requires its signers' headers (present at the API, well
formed at the WAF; the handler checks what they say)."""
ROUTES: dict[str, tuple[str, ...]] = {
    path: tuple(SIGNATURE_HEADER_PATTERNS[auth]) for path, auth in ROUTE_AUTH.items()
}
TWILIO_HEADERS = tuple(SIGNATURE_HEADER_PATTERNS["twilio"])
APP_HEADERS = tuple(SIGNATURE_HEADER_PATTERNS["app"])
RATE_LIMITED = 429
Statement = wafv2.CfnWebACL.StatementProperty
__all__ = [
    "MAX_REQUEST_BYTES",
    "ROUTES",
    "ROUTE_AUTH",
    "WebhookApi",
    "greater_than_pattern",
    "route_pattern",
    "waf_regex",
]

# What AWS WAF's regex engine (PCRE, a subset) refuses, and what Python reads differently.
_UNSUPPORTED_GROUPS = {
    "=": "a lookahead",
    "!": "a negative lookahead",
    "<": "a lookbehind or a named group",
    "P": "a named group",
    ">": "an atomic group",
    "(": "a conditional pattern",
    "#": "a comment",
}
_UNSUPPORTED_ESCAPES = {
    **{str(n): "a backreference" for n in range(1, 10)},
    "g": "a backreference",
    "k": "a backreference",
    "K": "a match reset",
    "R": "a newline directive",
    "C": "a single-byte directive",
    "d": "\\d (Python's matches any Unicode digit, PCRE's ASCII only: write [0-9])",
    "w": "\\w (Unicode in Python, ASCII in PCRE: write the class out)",
    "s": "\\s (Unicode in Python, ASCII in PCRE: write the class out)",
    "b": "\\b (Unicode in Python, ASCII in PCRE)",
    "B": "\\B (Unicode in Python, ASCII in PCRE)",
}


def waf_regex(pattern: str) -> str:
    """``pattern`` (a Python regular expression) as AWS WAF's regex engine accepts it, matching
    the same strings: its capturing groups made non-capturing (WAF supports no capture).
    Refuses, naming it, a construct WAF does not support or that Python reads differently.
    (WAF searches the field, as ``re.search`` does: an anchored pattern's ``$`` also matches
    before a final newline, which a header's value cannot hold; the handler's ``fullmatch``
    checks again.)"""
    out: list[str] = []
    class_start: int | None = None  # where the open character class's first member is
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped in _UNSUPPORTED_ESCAPES and not (class_start is not None and escaped == "b"):
                raise ValueError(f"{pattern!r}: {_UNSUPPORTED_ESCAPES[escaped]}")
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if class_start is not None:
            if char == "^" and len(out) == class_start:
                class_start += 1  # a negated class: its first member comes after the caret
            elif char == "]" and len(out) > class_start:  # "]" first is a member, not the end
                class_start = None
        elif char == "[":
            class_start = len(out) + 1
        elif char == "(":
            if pattern[i + 1 : i + 2] != "?":
                out.append("(?:")
                i += 1
                continue
            kind = pattern[i + 2 : i + 3]
            if kind != ":":
                what = _UNSUPPORTED_GROUPS.get(kind, "an inline flag")
                raise ValueError(f"{pattern!r}: {what} (WAF does not support it)")
        elif char == "+" and out and out[-1][-1:] in "*+?}" and out[-1] != "\\+":
            raise ValueError(f"{pattern!r}: a possessive quantifier (WAF does not support it)")
        out.append(char)
        i += 1
    return "".join(out)


def route_pattern(paths: list[str]) -> str:
    """A WAF regex matching a request path that ends with one of ``paths`` (after the stage, or
    a custom domain's base path), trailing slashes included."""
    return "(?:" + "|".join(re.escape(path) for path in paths) + ")/*$"


def greater_than_pattern(limit: int) -> str:
    """A regular expression matching the decimal integers greater than ``limit`` (leading zeros
    allowed): WAF matches headers by pattern, not by number."""
    digits = str(limit)
    width = len(digits)
    options = [rf"[1-9]\d{{{width},}}"]  # more digits than the limit
    for i, digit in enumerate(digits):
        if digit == "9":
            continue
        rest = width - i - 1
        higher = f"[{int(digit) + 1}-9]" if digit != "8" else "9"
        options.append(digits[:i] + higher + (rf"\d{{{rest}}}" if rest else ""))
    return "^0*(" + "|".join(options) + ")$"


def stage_options(config: EnvConfig, access_logs: logs.ILogGroup) -> apigw.StageOptions:
    """A webhook stage's settings (the webhook API's and the fallback API's): the environment's
    throttle, JSON access logs, execution logs on errors without bodies, metrics, X-Ray."""
    return apigw.StageOptions(
        stage_name=STAGE,
        throttling_rate_limit=config.api_rate_limit,
        throttling_burst_limit=config.api_burst_limit,
        access_log_destination=apigw.LogGroupLogDestination(access_logs),
        access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
            caller=False,
            http_method=True,
            ip=True,
            protocol=True,
            request_time=True,
            resource_path=True,
            response_length=True,
            status=True,
            user=False,
        ),
        logging_level=apigw.MethodLoggingLevel.ERROR,
        data_trace_enabled=False,  # bodies are tenants' words: never in execution logs
        metrics_enabled=True,
        tracing_enabled=True,
    )


class WebhookApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        inbound: lambda_.Function,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention(config.log_retention_days),
            removal_policy=config.removal,
        )
        self.api = apigw.RestApi(
            self,
            "Api",
            rest_api_name=f"{stack.stack_name}-webhooks",
            description="maestro's webhooks: Twilio SMS, status, transcripts; in-app; kickoff",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,  # execution logs need the account's API Gateway log role
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.RETAIN,
            deploy_options=stage_options(config, self.access_logs),
        )
        # Parameters: the signature headers each route requires. Bodies: checked against a
        # method's request model where it has one; none has (form posts from Twilio, JSON the
        # handler parses with its pydantic models), so the handler stays the body's judge.
        validator = self.api.add_request_validator(
            "SignatureHeaders", validate_request_parameters=True, validate_request_body=True
        )
        integration = apigw.LambdaIntegration(inbound)
        for path, headers in ROUTES.items():
            resource = self.api.root.resource_for_path(path)
            resource.add_method(
                "POST",
                integration,
                request_validator=validator,
                request_parameters={f"method.request.header.{h}": True for h in headers},
            )
        self.url = self.api.url  # ends with "/<stage>/"
        self._web_acl(config)
        NagSuppressions.add_resource_suppressions(
            self.api,
            [
                NagPackSuppression(
                    id="AwsSolutions-APIG4",
                    reason="Twilio cannot present IAM, Cognito or a custom authorizer's "
                    "credentials: every request is authenticated by its signature in the "
                    "handler (X-Twilio-Signature, or maestro's HMAC for the app and the "
                    "assistant), and the signature headers are required at the edge.",
                ),
                NagPackSuppression(
                    id="AwsSolutions-COG4",
                    reason="No Cognito user pool: the callers are Twilio and two backends, "
                    "authenticated by request signatures (see APIG4).",
                ),
                NagPackSuppression(
                    id="AwsSolutions-IAM4",
                    reason="API Gateway's account-level CloudWatch role uses AWS's "
                    "AmazonAPIGatewayPushToCloudWatchLogs, the policy made for exactly this "
                    "role; it writes only API Gateway's execution logs.",
                    applies_to=[
                        "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                        "AmazonAPIGatewayPushToCloudWatchLogs"
                    ],
                ),
            ],
            apply_to_children=True,
        )

    def _web_acl(self, config: EnvConfig) -> None:
        name = f"{cdk.Stack.of(self).stack_name}-webhooks"
        self.web_acl_name = name

        def visibility(metric: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
            return wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name=metric,
                sampled_requests_enabled=True,
            )

        def block(code: int | None = None) -> wafv2.CfnWebACL.RuleActionProperty:
            custom = wafv2.CfnWebACL.CustomResponseProperty(response_code=code) if code else None
            return wafv2.CfnWebACL.RuleActionProperty(
                block=wafv2.CfnWebACL.BlockActionProperty(custom_response=custom)
            )

        def matches(field: wafv2.CfnWebACL.FieldToMatchProperty, regex: str) -> Statement:
            return Statement(
                regex_match_statement=wafv2.CfnWebACL.RegexMatchStatementProperty(
                    field_to_match=field,
                    regex_string=regex,
                    text_transformations=[
                        wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")
                    ],
                )
            )

        def well_formed(auth: Auth) -> Statement:
            """Every signature header of ``auth`` present and in its shape."""
            checks = [
                matches(
                    wafv2.CfnWebACL.FieldToMatchProperty(single_header={"Name": header.lower()}),
                    waf_regex(pattern),
                )
                for header, pattern in SIGNATURE_HEADER_PATTERNS[auth].items()
            ]
            if len(checks) == 1:
                return checks[0]
            return Statement(and_statement=wafv2.CfnWebACL.AndStatementProperty(statements=checks))

        def malformed_on_routes(auth: Auth) -> Statement:
            paths = [path for path, signer in ROUTE_AUTH.items() if signer == auth]
            on_routes = matches(
                wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}), route_pattern(paths)
            )
            return Statement(
                and_statement=wafv2.CfnWebACL.AndStatementProperty(
                    statements=[on_routes, self._not(well_formed(auth))]
                )
            )

        self.pattern_set = wafv2.CfnRegexPatternSet(
            self,
            "OversizedContentLength",
            scope="REGIONAL",
            description=f"Content-Length over {MAX_REQUEST_BYTES} bytes",
            regular_expression_list=[greater_than_pattern(MAX_REQUEST_BYTES)],
        )
        signers: tuple[Auth, ...] = ("twilio", "app")
        self.rule_metrics = {
            "body-too-large": f"{name}-body-too-large",
            "ip-reputation": f"{name}-ip-reputation",
            "rate-limited": f"{name}-rate-limited",
            **{f"{auth}-signature-malformed": f"{name}-{auth}-signature" for auth in signers},
            "unsigned": f"{name}-unsigned",
        }
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            name=name,
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=visibility(f"{name}-acl"),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="RequestBodyTooLarge",
                    priority=0,
                    action=block(413),
                    statement=Statement(
                        regex_pattern_set_reference_statement=wafv2.CfnWebACL.RegexPatternSetReferenceStatementProperty(
                            arn=self.pattern_set.attr_arn,
                            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(
                                single_header={"Name": "content-length"}
                            ),
                            text_transformations=[
                                wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")
                            ],
                        )
                    ),
                    visibility_config=visibility(self.rule_metrics["body-too-large"]),
                ),
                wafv2.CfnWebACL.RuleProperty(
                    name="AWSManagedRulesAmazonIpReputationList",
                    priority=1,
                    override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
                    statement=Statement(
                        managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                            vendor_name="AWS", name="AWSManagedRulesAmazonIpReputationList"
                        )
                    ),
                    visibility_config=visibility(self.rule_metrics["ip-reputation"]),
                ),
                # Before the shape rules, so a flood of junk counts against its address too.
                wafv2.CfnWebACL.RuleProperty(
                    name="RateLimitPerSourceIp",
                    priority=2,
                    action=block(RATE_LIMITED),
                    statement=Statement(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            aggregate_key_type="IP",
                            limit=config.webhook_rate_limit_per_ip,
                            evaluation_window_sec=300,
                        )
                    ),
                    visibility_config=visibility(self.rule_metrics["rate-limited"]),
                ),
                *(
                    wafv2.CfnWebACL.RuleProperty(
                        name=f"{auth.title()}SignatureMalformed",
                        priority=3 + index,
                        action=block(),  # 403
                        statement=malformed_on_routes(auth),
                        visibility_config=visibility(
                            self.rule_metrics[f"{auth}-signature-malformed"]
                        ),
                    )
                    for index, auth in enumerate(signers)
                ),
                # Any other path (a variant of a route's, or none of them): one signer's
                # headers, well formed, or a 403.
                wafv2.CfnWebACL.RuleProperty(
                    name="Unsigned",
                    priority=3 + len(signers),
                    action=block(),
                    statement=self._not(
                        Statement(
                            or_statement=wafv2.CfnWebACL.OrStatementProperty(
                                statements=[well_formed(auth) for auth in signers]
                            )
                        )
                    ),
                    visibility_config=visibility(self.rule_metrics["unsigned"]),
                ),
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.api.deployment_stage.stage_arn,
            web_acl_arn=self.web_acl.attr_arn,
        )

    @staticmethod
    def _not(statement: Statement) -> Statement:
        return Statement(not_statement=wafv2.CfnWebACL.NotStatementProperty(statement=statement))
