"""objects/pod_templates.py at its edges: whole counts, the API defaults of the group-size fields, names a template
falls back to, and what a preview's unknown values leave out.

Sources: Kubernetes batch/v1 JobSpec (pulumi-kubernetes 4.34.2's generated docstrings: `completionMode` "can be
`NonIndexed` (default) or `Indexed`"; `parallelism` defaults to 1: kubernetes.io/docs/concepts/workloads/controllers/job,
"Parallel execution for Jobs": "if unspecified, it defaults to 1"); KubeRay v1.7.0 raycluster_types.go (NumOfHosts:
"The default value is 1", `+kubebuilder:default:=1`); LWS leaderworkerset_types.go (`size` defaults to 1).
"""

from __future__ import annotations

import pytest

from tpu_stacks.objects.pod_templates import count, lws_group_size, pod_templates


def tpl(name: str) -> dict:
    return {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": name}]}}


def shape(kind: str, obj) -> list[tuple]:
    return [(f.where, f.name, f.pods, f.group_field) for f in pod_templates(kind, obj)]


@pytest.mark.parametrize(
    ("value", "whole"),
    [(4, 4), (0, 0), (-2, -2), (4.0, 4), ("4", 4), (" 12 ", 12), ("-3", -3)],
)
def test_whole_counts_are_read_from_ints_whole_floats_and_digit_strings(value, whole):
    assert count(value) == whole


@pytest.mark.parametrize("value", [True, False, 4.5, float("nan"), "4.0", "four", "", None, [4], {"n": 4}])
def test_anything_else_is_an_unknown_count(value):
    assert count(value) is None


def test_an_indexed_job_groups_its_parallel_pods_and_a_plain_one_each_pod_alone():
    indexed = {"spec": {"completionMode": "Indexed", "parallelism": 4, "template": tpl("j")}}
    assert shape("Job", indexed) == [("spec.template", "job", 4, "parallelism")]
    no_parallelism = {"spec": {"completionMode": "Indexed", "template": tpl("j")}}
    assert shape("Job", no_parallelism) == [("spec.template", "job", 1, "parallelism")]  # parallelism's default
    unknown = {"spec": {"completionMode": "Indexed", "parallelism": "<unknown>", "template": tpl("j")}}
    assert shape("Job", unknown) == [("spec.template", "job", 1, "parallelism")]
    plain = {"spec": {"completionMode": "NonIndexed", "parallelism": 4, "template": tpl("j")}}
    assert shape("Job", plain) == [("spec.template", "job", 1, None)]
    cron = {"spec": {"jobTemplate": {"spec": {"completionMode": "Indexed", "parallelism": 2, "template": tpl("c")}}}}
    assert shape("CronJob", cron) == [("spec.jobTemplate.spec.template", "job", 2, "parallelism")]


def test_group_sizes_default_to_one_and_an_unknown_one_is_none():
    def jobset(parallelism):
        job = {"template": tpl("j")} if parallelism is None else {"parallelism": parallelism, "template": tpl("j")}
        return {"spec": {"replicatedJobs": [{"template": {"spec": job}}, {"name": "", "template": {"spec": job}}]}}

    where = "spec.replicatedJobs[{}].template.spec"
    assert shape("JobSet", jobset(None)) == [
        (f"{where.format(0)}.template", "0", 1, f"{where.format(0)}.parallelism"),  # no name: its index
        (f"{where.format(1)}.template", "1", 1, f"{where.format(1)}.parallelism"),
    ]
    assert [f.pods for f in pod_templates("JobSet", jobset("x"))] == [None, None]
    workers = [{"template": tpl("w")}, {"groupName": 7, "template": tpl("w")}, {"groupName": "", "template": tpl("w")}]
    ray = {"headGroupSpec": {"template": tpl("h")}, "workerGroupSpecs": workers}
    assert shape("RayCluster", {"spec": ray}) == [
        ("spec.headGroupSpec.template", "head", 1, None),
        ("spec.workerGroupSpecs[0].template", "0", 1, "numOfHosts"),  # numOfHosts' default; no group name
        ("spec.workerGroupSpecs[1].template", "1", 1, "numOfHosts"),  # a name that is not text: its index
        ("spec.workerGroupSpecs[2].template", "2", 1, "numOfHosts"),
    ]
    # A RayJob's submitter is one pod (KubeRay v1.7.0 rayjob_types.go: SubmitterPodTemplate, "the template for the
    # pod that will run `ray job submit`"), ahead of its cluster's.
    assert shape("RayJob", {"spec": {"submitterPodTemplate": tpl("s"), "rayClusterSpec": ray}})[0] == (
        "spec.submitterPodTemplate",
        "submitter",
        1,
        None,
    )
    assert lws_group_size({"spec": {"leaderWorkerTemplate": {}}}) == 1
    assert lws_group_size({"spec": {"leaderWorkerTemplate": {"size": "4"}}}) == 4
    assert lws_group_size({"spec": {"leaderWorkerTemplate": {"size": 2.5}}}) is None


def test_each_built_in_kind_keeps_one_template_and_a_pod_is_its_own():
    for kind in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ReplicationController"):
        assert shape(kind, {"spec": {"template": tpl("d")}}) == [("spec.template", "template", 1, None)]
    assert shape("PodTemplate", {"template": tpl("t")}) == [("spec.template", "template", 1, None)]
    assert shape("PodTemplate", {"spec": {"template": tpl("t")}}) == []  # a PodTemplate's is at the top
    assert shape("Pod", tpl("p")) == [("spec", "pod", 1, None)]
    assert shape("Pod", {"spec": "<unknown>"}) == []


def test_what_is_not_a_dict_is_no_template():
    assert pod_templates("Deployment", "<unknown>") == []
    assert pod_templates("Deployment", None) == []
    assert pod_templates("Deployment", {"spec": "<unknown>"}) == []
    assert pod_templates("Deployment", {"spec": {"template": {"spec": "<unknown>"}}}) == []
    assert pod_templates("JobSet", {"spec": {"replicatedJobs": "<unknown>"}}) == []
    assert shape("RayCluster", {"spec": {"workerGroupSpecs": [{"numOfHosts": 2, "template": tpl("w")}]}}) == [
        ("spec.workerGroupSpecs[0].template", "0", 2, "numOfHosts")  # no head group: none reported
    ]
    found = pod_templates("Deployment", {"spec": {"template": tpl("d")}})
    assert found[0].template == tpl("d")


def test_an_unlisted_kind_is_searched_only_for_a_containers_list():
    assert shape("Operator", {"spec": {"template": tpl("x")}}) == [("spec.template", "template", None, None)]
    assert shape("Operator", {"spec": {"template": {"spec": {"containers": "<unknown>"}}}}) == []
    assert shape("Operator", {"spec": {"template": {"spec": {}}}}) == []
