"""The one pod-template walker (tpu_stacks.objects.pod_templates), which the policy pack and the security scan
both use: where each kind keeps its templates, their short names and how many pods form a group."""

from __future__ import annotations

import pytest

from scripts.security_scan import pod_templates as lifted
from tpu_stacks.objects.pod_templates import CUSTOM_KINDS, count, lws_group_size, pod_templates


def tpl(name: str) -> dict:
    return {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": name, "image": "i:1"}]}}


RAY = {
    "headGroupSpec": {"template": tpl("head")},
    "workerGroupSpecs": [{"groupName": "tpu", "numOfHosts": 4, "template": tpl("w")}],
}

OBJECTS = {
    "Pod": ({"kind": "Pod", **tpl("p")}, [("spec", "pod", 1, None)]),
    "Deployment": ({"spec": {"template": tpl("d")}}, [("spec.template", "template", 1, None)]),
    "StatefulSet": ({"spec": {"template": tpl("s")}}, [("spec.template", "template", 1, None)]),
    "DaemonSet": ({"spec": {"template": tpl("ds")}}, [("spec.template", "template", 1, None)]),
    "Job": (
        {"spec": {"completionMode": "Indexed", "parallelism": 4.0, "template": tpl("j")}},
        [("spec.template", "job", 4, "parallelism")],
    ),
    "CronJob": (
        {"spec": {"jobTemplate": {"spec": {"parallelism": 3, "template": tpl("c")}}}},
        [("spec.jobTemplate.spec.template", "job", 1, None)],  # not Indexed: each pod alone
    ),
    "JobSet": (
        {
            "spec": {
                "replicatedJobs": [{"name": "slice", "template": {"spec": {"parallelism": "2", "template": tpl("j")}}}]
            }
        },
        [
            (
                "spec.replicatedJobs[0].template.spec.template",
                "slice",
                2,
                "spec.replicatedJobs[0].template.spec.parallelism",
            )
        ],
    ),
    "RayCluster": (
        {"spec": RAY},
        [
            ("spec.headGroupSpec.template", "head", 1, None),
            ("spec.workerGroupSpecs[0].template", "tpu", 4, "numOfHosts"),
        ],
    ),
    "RayJob": (
        {"spec": {"submitterPodTemplate": tpl("sub"), "rayClusterSpec": RAY}},
        [
            ("spec.submitterPodTemplate", "submitter", 1, None),
            ("spec.rayClusterSpec.headGroupSpec.template", "head", 1, None),
            ("spec.rayClusterSpec.workerGroupSpecs[0].template", "tpu", 4, "numOfHosts"),
        ],
    ),
    "RayService": (
        {"spec": {"rayClusterConfig": RAY}},
        [
            ("spec.rayClusterConfig.headGroupSpec.template", "head", 1, None),
            ("spec.rayClusterConfig.workerGroupSpecs[0].template", "tpu", 4, "numOfHosts"),
        ],
    ),
    "LeaderWorkerSet": (
        {"spec": {"leaderWorkerTemplate": {"size": 4, "workerTemplate": tpl("w"), "leaderTemplate": tpl("l")}}},
        [
            ("spec.leaderWorkerTemplate.workerTemplate", "worker", None, "size"),
            ("spec.leaderWorkerTemplate.leaderTemplate", "leader", None, "size"),
        ],
    ),
    "SomeOperatorKind": ({"spec": {"template": tpl("x")}}, [("spec.template", "template", None, None)]),
}


@pytest.mark.parametrize("kind", OBJECTS)
def test_where_each_kind_keeps_its_templates(kind):
    obj, expected = OBJECTS[kind]
    found = pod_templates(kind, obj)
    assert [(f.where, f.name, f.pods, f.group_field) for f in found] == expected
    assert all(isinstance(f.template["spec"], dict) for f in found)


def test_missing_or_unknown_parts_are_no_template_and_unknown_counts_are_none():
    unknown = object()  # what a preview hands over for a value it does not know yet
    assert pod_templates("RayJob", {"spec": {"submitterPodTemplate": unknown, "rayClusterSpec": unknown}}) == []
    assert pod_templates("Deployment", {"spec": {"template": {"spec": unknown}}}) == []
    (worker,) = pod_templates(
        "RayCluster", {"spec": {"workerGroupSpecs": [{"numOfHosts": unknown, "template": tpl("w")}]}}
    )
    assert worker.pods is None and worker.name == "0"
    assert pod_templates("Deployment", None) == []
    assert lws_group_size({"spec": {"leaderWorkerTemplate": {}}}) == 1
    assert count(True) is None and count(2.5) is None and count(" 8 ") == 8


@pytest.mark.parametrize("kind", CUSTOM_KINDS)
def test_the_scan_lifts_every_template_of_every_custom_kind_the_pack_judges(kind):
    """Before, the scan kept its own walker and skipped RayService and LeaderWorkerSet pods."""
    obj, _ = OBJECTS[kind]
    assert [name for name, _ in lifted({"kind": kind, **obj})] == [f.name for f in pod_templates(kind, obj)]
    assert lifted({"kind": kind, **obj})


def test_the_scan_leaves_built_in_kinds_to_checkov():
    assert lifted({"kind": "Deployment", "spec": {"template": tpl("d")}}) == []
