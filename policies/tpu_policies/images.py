"""Rule 10 (advisory): images and add-on manifests are pinned.

`vllm/vllm-tpu:latest`, `rayproject/ray:nightly` and manifests applied from `master` change
under a running stack: the next node repair or rollout pulls different code than was tested
(xpk#443, the Custom Metrics adapter applied from master). A version tag or digest, and a
release tag or commit in manifest URLs, make a preview mean the same thing tomorrow.
"""

from __future__ import annotations

import re
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import as_list, as_str, plain
from tpu_policies.workloads import pod_templates
from tpu_stacks.images import MOVING_TAGS, image_problem

MUTABLE_TAGS = list(MOVING_TAGS)
BRANCH_IN_URL = re.compile(r"(?:^|[/=@])(?:master|main|HEAD|latest|nightly|trunk)(?:[/?&#]|$)")
MANIFEST_INPUTS = {
    "kubernetes:yaml/v2:ConfigFile": "file",
    "kubernetes:yaml/v2:ConfigGroup": "files",
    "kubernetes:kustomize/v2:Directory": "directory",
}
CHART_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")


MUTABLE_TAGS_SETTING = Setting(
    "mutableTags",
    MUTABLE_TAGS,
    "Tags that move (also matched as a prefix or suffix, e.g. nightly-py312-tpu).",
)
REQUIRE_DIGEST = Setting(
    "requireDigest",
    False,
    "Require image digests (image@sha256:...) rather than version tags.",
)


def is_remote(location: str) -> bool:
    return "://" in location or location.startswith(("github.com/", "git::", "git@"))


def _manifest_problems(resource_type: str, props: dict[str, Any]) -> list[str]:
    problems = []
    key = MANIFEST_INPUTS.get(resource_type)
    if key:
        value = props.get(key)
        for location in [value] if isinstance(value, str) else as_list(value):
            if isinstance(location, str) and is_remote(location) and BRANCH_IN_URL.search(location.split("://", 1)[-1]):
                problems.append(
                    f"{key} {location} follows a branch or 'latest', so its content changes without a code "
                    "change; use a release tag or commit SHA in the URL"
                )
    if resource_type in CHART_TYPES:
        chart = as_str(props.get("chart"))
        if chart and not chart.startswith((".", "/")) and not as_str(props.get("version")):
            problems.append(f"chart {chart} has no version, so every deployment may install a newer chart; set version")
    return problems


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    props = plain(args.props)
    for problem in _manifest_problems(args.resource_type, props):
        report_violation(problem, None)
    mutable = [str(tag).lower() for tag in MUTABLE_TAGS_SETTING.read(args)]
    require_digest = bool(REQUIRE_DIGEST.read(args))
    for template in pod_templates(args.resource_type, props):
        for container in template.containers():
            image = as_str(container.get("image"))
            issue = image_problem(image, mutable, require_digest) if image else None
            if issue:
                report_violation(
                    f"{template.where} container {container.get('name') or '?'}: image {image} {issue}; "
                    "pin a version tag or a digest (image@sha256:...)",
                    None,
                )


POLICY = ResourceValidationPolicy(
    name="pinned-images",
    description="Container images use a fixed version tag or digest (not latest/nightly/untagged), and add-on "
    "manifests and charts are pinned to a release, not a branch.",
    validate=_validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
    config_schema=config_schema(MUTABLE_TAGS_SETTING, REQUIRE_DIGEST),
)
