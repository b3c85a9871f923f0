"""The webhook API: REST API Gateway in front of ``functions/inbound_sms``.

- the five routes the inbound resolver serves, POST only; each requires its signature headers
  at the edge (a request validator), so an unsigned request never reaches Lambda; the handler
  still verifies every signature;
- stage throttling (per environment), JSON access logs, execution logs on errors, X-Ray;
- a body size limit at the edge, the one the handler enforces
  (``maestro.ingest.webhooks.MAX_REQUEST_BYTES``, derived from the longest message it accepts):
  a WAF rule refuses a request whose Content-Length could not hold a message the handler would
  accept. The handler keeps its own 413s (for the body, and for a text over its channel's
  length), so the caller still learns why.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.config import EnvConfig
from infra.functions import retention
from maestro.ingest.webhooks import MAX_REQUEST_BYTES

STAGE = "v1"
TWILIO_HEADERS = ("X-Twilio-Signature",)
APP_HEADERS = ("X-Maestro-Signature", "X-Maestro-Timestamp")
# Route → the headers that must be present (the handler checks what they say).
ROUTES: dict[str, tuple[str, ...]] = {
    "/twilio/sms": TWILIO_HEADERS,
    "/twilio/status": TWILIO_HEADERS,
    "/twilio/transcript": TWILIO_HEADERS,
    "/app/messages": APP_HEADERS,
    "/assistant/kickoff": APP_HEADERS,
}
__all__ = ["MAX_REQUEST_BYTES", "ROUTES", "WebhookApi", "greater_than_pattern"]


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
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                throttling_rate_limit=config.api_rate_limit,
                throttling_burst_limit=config.api_burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
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
            ),
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
        self._web_acl()
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

    def _web_acl(self) -> None:
        name = f"{cdk.Stack.of(self).stack_name}-webhooks"

        def visibility(metric: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
            return wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name=metric,
                sampled_requests_enabled=True,
            )

        self.pattern_set = wafv2.CfnRegexPatternSet(
            self,
            "OversizedContentLength",
            scope="REGIONAL",
            description=f"Content-Length over {MAX_REQUEST_BYTES} bytes",
            regular_expression_list=[greater_than_pattern(MAX_REQUEST_BYTES)],
        )
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
                    action=wafv2.CfnWebACL.RuleActionProperty(
                        block=wafv2.CfnWebACL.BlockActionProperty(
                            custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                                response_code=413
                            )
                        )
                    ),
                    statement=wafv2.CfnWebACL.StatementProperty(
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
                    visibility_config=visibility(f"{name}-body-too-large"),
                ),
                wafv2.CfnWebACL.RuleProperty(
                    name="AWSManagedRulesAmazonIpReputationList",
                    priority=1,
                    override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                            vendor_name="AWS", name="AWSManagedRulesAmazonIpReputationList"
                        )
                    ),
                    visibility_config=visibility(f"{name}-ip-reputation"),
                ),
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.api.deployment_stage.stage_arn,
            web_acl_arn=self.web_acl.attr_arn,
        )
