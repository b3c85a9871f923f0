"""Twilio's SMS fallback URL: a second REST API whose one route keeps the signed request on the
fallback queue (API Gateway → SQS ``SendMessage``, no Lambda), for the drain function.

Twilio requests the number's fallback URL when the primary webhook answers an error (a 5XX, a
429 from the stage throttle) or times out. This API shares nothing the primary route can fail
on: no function, no DynamoDB, no secret, its own stage and throttle. It checks only what the
edge can: the web ACL (the same rules as the webhook API's: the signature header's shape, the
per-address rate, the body size) and the request validator (the signature header present, a
form body); the drain verifies the signature against the URL Twilio called, as the primary
route would. What it keeps (:mod:`maestro.ingest.fallback`): the body as sent; the signature
headers, the host and the path as message attributes (the names are shared with the drain).
A 200 (empty TwiML) means SQS has it; when SQS refuses it, Twilio gets a 500 (and the API's
5XX alarm fires).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_wafv2 as wafv2
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.api import TWILIO_HEADERS, stage_options
from infra.config import EnvConfig
from infra.functions import retention
from maestro.ingest.fallback import FALLBACK_ATTRIBUTES, FALLBACK_ROUTE
from maestro.ingest.webhooks import EMPTY_TWIML, FORM

__all__ = ["FallbackApi", "fallback_request_template"]

SETTINGS_HEADER = "X-Twilio-Webhooks-Signature-Settings"
_VALUES = {
    "signature": "$util.urlEncode($input.params('X-Twilio-Signature'))",
    "content_type": "$util.urlEncode($input.params('Content-Type'))",
    "proto": "https",  # an execute-api (or custom domain) endpoint is HTTPS only
    "host": "$util.urlEncode($context.domainName)",
    "path": "$util.urlEncode($context.path)",  # as requested: with the stage
    "request_id": "$util.urlEncode($context.requestId)",
    "received_ms": "$context.requestTimeEpoch",
}
"""What API Gateway's mapping template puts in each attribute (``FALLBACK_ATTRIBUTES``)."""


def fallback_request_template() -> str:
    """The integration's request template: an SQS ``SendMessage`` (query protocol, form
    encoded) of the raw body, with the attributes the drain reads; the optional signature
    settings header last, only when the request has it (an attribute cannot be empty)."""
    if set(_VALUES) != set(FALLBACK_ATTRIBUTES) - {"signature_settings"}:
        raise ValueError("the template must fill every attribute the drain reads")
    parts = ["Action=SendMessage", "MessageBody=$util.urlEncode($input.body)"]
    for number, (field, value) in enumerate(_VALUES.items(), start=1):
        parts += _attribute(number, FALLBACK_ATTRIBUTES[field], value)
    settings = f"$input.params('{SETTINGS_HEADER}')"
    optional = "&".join(
        _attribute(len(_VALUES) + 1, FALLBACK_ATTRIBUTES["signature_settings"], settings)
    ).replace(settings, f"$util.urlEncode({settings})")
    return "&".join(parts) + f'#if({settings} != "")&{optional}#end'


def _attribute(number: int, name: str, value: str) -> list[str]:
    prefix = f"MessageAttribute.{number}"
    return [
        f"{prefix}.Name={name}",
        f"{prefix}.Value.DataType=String",
        f"{prefix}.Value.StringValue={value}",
    ]


class FallbackApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: EnvConfig,
        queue: sqs.IQueue,
        web_acl: wafv2.CfnWebACL,
        after: Construct,
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
            rest_api_name=f"{stack.stack_name}-fallback",
            description="maestro's Twilio SMS fallback URL: the request kept on a queue",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=False,  # the account's API Gateway log role: the webhook API's
            deploy_options=stage_options(config, self.access_logs),
        )
        # The stage's execution logs need the account's log role, which the webhook API sets.
        self.api.node.add_dependency(after)
        role = iam.Role(
            self,
            "SendRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            description="The fallback route's integration: SendMessage to the fallback queue",
        )
        # SendMessage alone (the CDK's grant_send_messages adds GetQueueUrl and attributes).
        role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queue.queue_arn])
        )
        twiml = {"text/xml": EMPTY_TWIML, "application/json": EMPTY_TWIML}
        content_type = "method.response.header.Content-Type"
        integration = apigw.AwsIntegration(
            service="sqs",
            path=f"{stack.account}/{queue.queue_name}",
            integration_http_method="POST",
            options=apigw.IntegrationOptions(
                credentials_role=role,
                # Only a form body has a template: anything else is a 415 before SQS.
                passthrough_behavior=apigw.PassthroughBehavior.NEVER,
                request_parameters={"integration.request.header.Content-Type": f"'{FORM}'"},
                request_templates={FORM: fallback_request_template()},
                integration_responses=[
                    apigw.IntegrationResponse(
                        status_code="200",
                        response_templates=twiml,
                        response_parameters={content_type: "'text/xml'"},
                    ),
                    apigw.IntegrationResponse(
                        status_code="500",
                        selection_pattern="[45]\\d{2}",  # SQS refused it, or failed
                        response_templates={
                            "application/json": '{"message": "the request could not be kept"}'
                        },
                    ),
                ],
            ),
        )
        validator = self.api.add_request_validator(
            "SignatureHeader", validate_request_parameters=True, validate_request_body=True
        )
        self.api.root.resource_for_path(FALLBACK_ROUTE).add_method(
            "POST",
            integration,
            request_validator=validator,
            request_parameters={f"method.request.header.{h}": True for h in TWILIO_HEADERS},
            method_responses=[
                apigw.MethodResponse(status_code="200", response_parameters={content_type: True}),
                apigw.MethodResponse(status_code="500"),
            ],
        )
        self.url = self.api.url  # ends with "/<stage>/"
        self.sms_url = self.url + FALLBACK_ROUTE.lstrip("/")
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.api.deployment_stage.stage_arn,
            web_acl_arn=web_acl.attr_arn,
        )
        NagSuppressions.add_resource_suppressions(
            self.api,
            [
                NagPackSuppression(
                    id="AwsSolutions-APIG4",
                    reason="Twilio cannot present IAM, Cognito or a custom authorizer's "
                    "credentials: the request is kept as it came and its signature verified by "
                    "the drain function (X-Twilio-Signature, required at the edge and checked "
                    "for its shape by the web ACL).",
                ),
                NagPackSuppression(
                    id="AwsSolutions-COG4",
                    reason="No Cognito user pool: the caller is Twilio, authenticated by the "
                    "request's signature (see APIG4).",
                ),
            ],
            apply_to_children=True,
        )
