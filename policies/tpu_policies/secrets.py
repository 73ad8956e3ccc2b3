"""Rule 8: no plaintext secrets in workloads, config maps or unmarked Secret data.

The tutorials put the Hugging Face token in an env var literal or a command line
(vllm production-stack#14, lws#234): anyone who can read the Deployment, its logs or the
Pulumi state then has the token. Tokens belong in a Kubernetes Secret, referenced with
`valueFrom.secretKeyRef`, whose data Pulumi stores encrypted (marked secret). What looks like a
token, and which env names hold secrets, is `tpu_stacks.secrets`: the same rule the program redacts
its error lines with.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import as_dict, as_list, plain
from tpu_policies.workloads import is_kubernetes, kind_of, pod_templates
from tpu_stacks.secrets import SECRET_NAME, is_secret_name, secret_kind

SECRET_KINDS = ("data", "stringData")

NAME_PATTERN = Setting(
    "secretEnvNamePattern",
    SECRET_NAME,
    "Regular expression: env vars whose name matches must not have a literal value.",
)
ALLOWED_NAMES = Setting(
    "allowedEnvNames",
    ["GOOGLE_APPLICATION_CREDENTIALS"],
    "Env var names that match the pattern but hold no secret (e.g. CACHE_KEY; GOOGLE_APPLICATION_CREDENTIALS "
    "holds the path of a key file, not a key).",
)


def _env_problems(where: str, container: dict[str, Any], name_pattern: str, allowed: set[str]) -> list[str]:
    problems = []
    cname = container.get("name") or "?"
    for env in as_list(container.get("env")):
        name, value = env.get("name") if isinstance(env, dict) else None, as_dict(env).get("value")
        if not isinstance(value, str) or not value or name in allowed:
            continue
        kind = secret_kind(value)
        if kind or (isinstance(name, str) and is_secret_name(name, name_pattern)):
            what = f"holds a {kind}" if kind else "is a literal value"
            problems.append(
                f"{where} container {cname}: env {name} {what}; put it in a Kubernetes Secret and use "
                "env.valueFrom.secretKeyRef (from a Pulumi config secret), never a literal value"
            )
    for key in ("command", "args"):
        for part in as_list(container.get(key)):
            if kind := secret_kind(part):
                problems.append(
                    f"{where} container {cname}: {key} contains a {kind}; read it from a Secret-backed env "
                    "var or a mounted Secret file instead of the command line"
                )
                break
    return problems


def check(resource_type: str, props: dict[str, Any], secret_outputs: list[str], args: Any) -> list[str]:
    """Every plaintext credential in one Kubernetes object."""
    if not is_kubernetes(resource_type):
        return []
    kind = kind_of(resource_type, props)
    problems: list[str] = []
    if kind == "Secret":
        for field in SECRET_KINDS:
            if as_dict(props.get(field)) and field not in secret_outputs:
                problems.append(
                    f"Secret {field} is not marked secret, so it is stored in plaintext in the Pulumi state; "
                    "wrap the values with pulumi.Output.secret (or read them with config.require_secret) "
                    f'or set additional_secret_outputs=["{field}"]'
                )
        return problems
    if kind == "ConfigMap":
        for key, value in {**as_dict(props.get("data")), **as_dict(props.get("binaryData"))}.items():
            if found := secret_kind(value):
                problems.append(f"ConfigMap key {key} holds a {found}; move it to a Kubernetes Secret")
        return problems
    name_pattern = str(NAME_PATTERN.read(args))
    allowed = set(ALLOWED_NAMES.read(args))
    for template in pod_templates(resource_type, props):
        for container in template.containers():
            problems += _env_problems(template.where, container, name_pattern, allowed)
    return problems


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    secret_outputs = list(getattr(args.opts, "additional_secret_outputs", None) or [])
    for problem in check(args.resource_type, plain(args.props), secret_outputs, args):
        report_violation(problem, None)


POLICY = ResourceValidationPolicy(
    name="no-plaintext-secrets",
    description="No credential in plaintext: no token-looking or secret-named literal env values or command-line "
    "tokens in pods, no tokens in ConfigMaps, and Secret data marked secret.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    config_schema=config_schema(NAME_PATTERN, ALLOWED_NAMES),
)
