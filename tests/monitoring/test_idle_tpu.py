"""`tpu-nodes-idle`: every serving stack alerts when its TPU nodes run with no serving pod Ready (a slice billed for
nothing). The TPU nodes are read from GKE's node accelerator metric, which has a series per chip whether a pod holds
it or not, scoped by cluster only (a node has no namespace); readiness from the Pod kube state package."""

import re

import pytest

from tpu_stacks.catalog.gke_metrics import KUBE_STATE_METRICS, system_metric
from tpu_stacks.gcp.monitoring.alerts import IDLE_MINUTES, TPU_NODE_METRIC

from .test_stacks import ALERT, of_type

SERVING = ["dev", "vllm", "vllm-405b", "jetstream-gemma", "saxml"]


def idle_alert(capture):
    (alert,) = [r.inputs for r in of_type(capture, ALERT) if r.inputs["userLabels"]["alert"] == "tpu-nodes-idle"]
    condition = alert["conditions"][0]["conditionPrometheusQueryLanguage"]
    return condition["query"], int(condition["duration"].rstrip("s")) // 60


@pytest.mark.parametrize("stack", SERVING)
def test_every_serving_stack_alerts_on_tpu_nodes_with_no_ready_server(planned, stack):
    query, minutes = idle_alert(planned[stack])
    node = system_metric(TPU_NODE_METRIC)
    assert node is not None and node.resource == "k8s_node"
    nodes = re.search(rf"{re.escape(node.promql)}\{{([^}}]*)\}}", query)
    assert nodes is not None and "namespace_name" not in nodes.group(1) and "cluster_name=" in nodes.group(1)
    assert "kube_pod_container_status_ready" in KUBE_STATE_METRICS and "kube_pod_container_status_ready{" in query
    assert " unless on() " in query  # no ready series at all still fires
    assert minutes >= IDLE_MINUTES


def test_the_multi_host_workers_are_ready_on_their_raylet_so_thirty_minutes(planned):
    query, minutes = idle_alert(planned["vllm-405b"])
    assert minutes == IDLE_MINUTES and 'container=~"ray-worker"' in query


def test_a_multi_host_slice_whose_serve_deployment_failed_is_idle_though_its_workers_are_ready(planned):
    """The workers' readiness is their raylet's (vllm/rayservice.py): after Serve gives the deployment up they stay
    Ready, so the alert also fires on Serve's own state, DEPLOY_FAILED (ledger:
    ray.serve.metric.deployment-status-failed, the value read in the pinned wheel)."""
    from tpu_stacks.catalog.upstream import number

    query, _ = idle_alert(planned["vllm-405b"])
    failed = number("ray.serve.metric.deployment-status-failed")
    assert re.search(
        rf'\) or \(\(count\(.+\) > 0\) and on\(\) \(max\(ray_serve_deployment_status\{{[^}}]*application="llm"[^}}]*\}}\) == {failed}\)\)$',
        query,
    ), query
    assert "ray_serve_deployment_status" not in idle_alert(planned["vllm"])[0]


def test_a_single_host_server_is_ready_after_its_cold_start_so_not_before_its_startup_budget(planned):
    query, minutes = idle_alert(planned["vllm"])
    assert 'container=~"vllm-tpu"' in query and minutes >= IDLE_MINUTES


@pytest.mark.parametrize("stack", ["raytrain", "cluster"])
def test_a_training_or_empty_stack_has_none(planned, stack):
    assert not [r for r in of_type(planned[stack], ALERT) if r.inputs["userLabels"]["alert"] == "tpu-nodes-idle"]


@pytest.mark.parametrize("stack", ["jetstream-gemma", "jetstream-llama3"])
def test_no_tpu_node_exists_while_the_checkpoint_converts_so_the_alert_has_no_node_to_count(planned, stack):
    """The converter runs for up to two hours before any server: were the TPU VMs up then (they were: a fixed pool,
    the converter on their CPUs), the alert would fire on a stack doing what it should. Now the TPU pool starts at 0
    nodes and the converter's pod selects the jobs pool, CPU machines that have no accelerator series: the alert's
    only node signal is GKE's node accelerator metric, so it counts nothing until the servers bring their nodes."""
    from tpu_stacks.catalog.tpu import generation_of_machine_type

    query, _ = idle_alert(planned[stack])
    node = system_metric(TPU_NODE_METRIC)
    assert node is not None and "/accelerator/" in node.type and f"count({node.promql}" in query
    pools = {r.inputs["name"]: r.inputs for r in of_type(planned[stack], "gcp:container/nodePool:NodePool")}
    tpu = [p for p in pools.values() if generation_of_machine_type(p["nodeConfig"]["machineType"])]
    assert tpu and all(p["autoscaling"]["minNodeCount"] == 0 and "nodeCount" not in p for p in tpu)
    (job,) = [r.inputs for r in of_type(planned[stack], "kubernetes:batch/v1:Job") if "converter" in r.name]
    selected = job["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-nodepool"]
    assert generation_of_machine_type(pools[selected]["nodeConfig"]["machineType"]) is None
