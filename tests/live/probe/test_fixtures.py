"""The probe fixtures are synthetic Pods, labelled so, and valid for the Kubernetes Pod schema and the pinned client."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml
from kubernetes.client import V1Pod

from tests.live.probe.fake_core import FIXTURES

PATHS = sorted(FIXTURES.glob("*.yaml"))


def test_there_are_fixtures_for_each_verdict():
    names = {p.stem for p in PATHS}
    assert {"dns-resolved", "dns-timeout", "pending-unschedulable", "pending-image-pull", "no-report"} <= names


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_each_fixture_says_it_is_synthetic_and_fits_the_pod_schema(path):
    text = path.read_text()
    assert text.startswith("# synthetic: ")
    pod = yaml.safe_load(text)
    kubernetes_validate.validate(pod, "1.33", strict=True)
    assert V1Pod.from_dict(pod).metadata.name == pod["metadata"]["name"]


def test_the_schema_check_refuses_a_field_the_pod_schema_lacks():
    pod = yaml.safe_load(PATHS[0].read_text())
    pod["status"]["containerStatuses"][0]["state"]["finished"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, "1.33", strict=True)
