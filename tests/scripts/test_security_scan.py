"""scripts/security_scan.py's preparation of what checkov reads (checkov itself is not installed here)."""

from pathlib import Path

import yaml

from scripts.security_scan import as_pod, drop_skips, pod_templates, prepare

TEMPLATE = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}


def test_pod_templates_of_jobsets_and_ray_clusters_become_pods_in_their_namespace():
    jobset = {
        "kind": "JobSet",
        "metadata": {"name": "set", "namespace": "ns"},
        "spec": {"replicatedJobs": [{"name": "workers", "template": {"spec": {"template": TEMPLATE}}}]},
    }
    ((suffix, template),) = pod_templates(jobset)
    pod = as_pod(jobset, suffix, template)
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": {"app": "w"}, "name": "set-workers", "namespace": "ns"},
        "spec": TEMPLATE["spec"],
    }
    ray = {
        "kind": "RayCluster",
        "spec": {
            "headGroupSpec": {"template": TEMPLATE},
            "workerGroupSpecs": [{"groupName": "tpu", "template": TEMPLATE}],
        },
    }
    assert [s for s, _ in pod_templates(ray)] == ["head", "tpu"]
    assert pod_templates({"kind": "Deployment", "spec": {"template": TEMPLATE}}) == []  # checkov reads it itself


def test_skip_annotations_are_removed_at_any_depth_and_nothing_else():
    obj = {
        "metadata": {"annotations": {"checkov.io/skip1": "CKV_K8S_43=why", "keep": "x"}},
        "spec": [{"checkov.io/skip2": 1}],
    }
    assert drop_skips(obj) == {"metadata": {"annotations": {"keep": "x"}}, "spec": [{}]}


def test_prepare_writes_the_objects_and_the_lifted_pods(tmp_path: Path):
    source = tmp_path / "manifests"
    source.mkdir()
    raycluster = {
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "r"},
        "spec": {"headGroupSpec": {"template": TEMPLATE}},
    }
    (source / "raycluster-r-rc.yaml").write_text(yaml.safe_dump(raycluster))
    assert prepare(source, tmp_path / "scan") == 1
    assert sorted(p.name for p in (tmp_path / "scan").iterdir()) == [
        "pod-from-raycluster-r-rc-head.yaml",
        "raycluster-r-rc.yaml",
    ]
