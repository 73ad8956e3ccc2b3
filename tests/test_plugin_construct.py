"""The plugin as another language's program reaches it: a gRPC `Construct` with camelCase inputs, the
state it answers in the schema's camelCase (arrays and maps of objects too), secrets still secret."""

from typing import NotRequired, Optional, TypedDict

import pulumi
import pytest
from pulumi.errors import InputPropertyError
from pulumi.provider.experimental.component import ComponentProvider

from tests.clients import CLIENTS
from tests.plugin_host import Refused, construct, is_secret, reveal
from tpu_stacks.plugin import COMPONENTS, PACKAGE, TpuStacksProvider

CLUSTER = {"project": "proj", "location": "us-central1-b", "releaseChannel": "RAPID"}
SLICE_INFO_KEYS = {
    "poolName",
    "machineType",
    "topology",
    "chips",
    "nodes",
    "chipsPerVm",
    "acceleratorLabel",
    "generation",
    "nodeSelector",
}


def cluster_inputs() -> dict:
    slices = [{"generation": "v6e", "topology": "2x4", "autoscaling": {"minNodes": 1, "maxNodes": 2}}]
    return {**CLUSTER, "name": "serving", "slices": slices}


def test_tpu_cluster_slices_reach_other_languages_in_camel_case():
    state, mocks = construct(TpuStacksProvider(), "tpu-stacks:index:TpuCluster", "serving", cluster_inputs())
    (info,) = state["slices"]
    assert set(info) == SLICE_INFO_KEYS
    # v6e 2x4: 8 chips on one ct6e-standard-8t VM ([D-v6e]), selected by GKE's two TPU labels.
    assert (info["poolName"], info["machineType"], info["chips"], info["nodes"], info["chipsPerVm"]) == (
        "tpu-v6e-2x4",
        "ct6e-standard-8t",
        8,
        1,
        8,
    )
    # A map's keys are data (node labels), not field names: they stay exactly as Kubernetes spells them.
    assert info["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    assert state["clusterName"] == "serving" and state["location"] == "us-central1-b"
    # The nested camelCase inputs reached the pool (autoscaling.minNodes -> the provider's minNodeCount).
    pool = mocks.named("gcp:container/nodePool:NodePool", "serving-tpu-v6e-2x4").inputs
    assert pool["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert is_secret(state["kubeconfig"]) and "gke-gcloud-auth-plugin" in reveal(state["kubeconfig"])


def test_the_sdks_own_provider_leaves_array_items_in_snake_case():
    """Why `TpuStacksProvider.get_state` exists: pulumi 3.272.0's provider renames one object's keys, not
    a list's items (pulumi/pulumi#18882). If this starts failing, upstream fixed it; drop the override."""
    stock = ComponentProvider(list(COMPONENTS), PACKAGE)
    state, _ = construct(stock, "tpu-stacks:index:TpuCluster", "serving", cluster_inputs())
    (info,) = state["slices"]
    assert "pool_name" in info and "poolName" not in info


def test_vllm_stack_gives_a_typescript_user_its_cluster():
    inputs = {
        "cluster": CLUSTER,
        "model": "meta-llama/Llama-3.1-8B",
        "tpuGeneration": "v6e",
        "sourceRanges": CLIENTS,
        "hfToken": "hf_from_another_language",
        "replicas": {"min": 1, "max": 1},
    }
    state, mocks = construct(TpuStacksProvider(), "tpu-stacks:index:VllmStack", "vllm", inputs, secrets=("hfToken",))
    assert state["clusterName"] == "tpu-cluster"  # the cluster spec's default name
    assert state["clusterEndpoint"] == "203.0.113.10"  # what the offline mocks answer for a new cluster
    assert is_secret(state["kubeconfig"])
    kubeconfig = reveal(state["kubeconfig"])
    assert "https://203.0.113.10" in kubeconfig and "gke_proj_us-central1-b_tpu-cluster" in kubeconfig
    served = state["servedSlice"]
    assert set(served) == {"generation", "topology", "machineType", "chips", "tensorParallelSize"}
    # The token arrived as a secret and stays one in the Kubernetes Secret the pods read.
    secret = mocks.named("kubernetes:core/v1:Secret", "vllm-secret").inputs
    assert is_secret(secret["stringData"])
    assert reveal(secret["stringData"]) == {"hf_api_token": "hf_from_another_language"}


class Leaf(TypedDict):
    """An object inside lists and maps."""

    max_nodes: int
    node_labels: NotRequired[dict[str, str]]


class Branch(TypedDict):
    leaves: list[Leaf]
    by_zone: dict[str, Leaf]


class Nested(pulumi.ComponentResource):
    """Outputs that nest objects in lists and maps, several levels deep."""

    branches: pulumi.Output[list[Branch]]
    by_name: pulumi.Output[dict[str, list[Leaf]]]

    def __init__(self, name: str, args: dict, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(f"{PACKAGE}:index:Nested", name, {}, opts)
        leaf = Leaf(max_nodes=2, node_labels={"cloud.google.com/gke-spot": "true"})
        self.branches = pulumi.Output.from_input([Branch(leaves=[leaf], by_zone={"us-central1-b": leaf})])
        self.by_name = pulumi.Output.from_input({"pool_a": [Leaf(max_nodes=4)]})
        self.register_outputs({})


def test_objects_are_renamed_at_any_depth_of_lists_and_maps():
    state, _ = construct(TpuStacksProvider([Nested]), f"{PACKAGE}:index:Nested", "nested", {})
    leaf = {"maxNodes": 2, "nodeLabels": {"cloud.google.com/gke-spot": "true"}}
    assert state["branches"] == [{"leaves": [leaf], "byZone": {"us-central1-b": leaf}}]
    assert state["byName"] == {"pool_a": [{"maxNodes": 4}]}  # the map's key is data, kept as written


WORKLOADS = {
    "SaxmlStack": ({"cluster": {"project": "proj", "location": "us-central1-a"}, "sourceRanges": CLIENTS}, ()),
    "JetStreamStack": (
        {
            "cluster": {"project": "proj", "location": "us-west4"},
            "model": "google/gemma-7b-it",
            "zone": "us-west4-a",
            "hfToken": "hf_token_value",
        },
        ("hfToken",),
    ),
    "RayTrainStack": (
        {
            "cluster": {"project": "proj", "location": "us-east5-b", "releaseChannel": "RAPID"},
            "model": "llama3-8b",
            "tpuGeneration": "v6e",
            "topology": "4x4",
            "parallelism": {"fsdp": 4, "tensor": 4},
        },
        (),
    ),
}


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_workload_returns_its_cluster_through_construct(workload):
    inputs, secrets = WORKLOADS[workload]
    state, mocks = construct(TpuStacksProvider(), f"tpu-stacks:index:{workload}", "w", inputs, secrets=secrets)
    (cluster,) = mocks.of_type("gcp:container/cluster:Cluster")
    assert state["clusterName"] == cluster.inputs["name"] == "tpu-cluster"
    assert state["clusterEndpoint"] == "203.0.113.10"
    assert is_secret(state["kubeconfig"]) and "https://203.0.113.10" in reveal(state["kubeconfig"])
    assert not any(is_secret(state[name]) for name in ("clusterName", "clusterEndpoint"))


@pytest.mark.parametrize(
    ("component", "inputs", "secrets", "path"),
    [
        ("TpuCluster", {"project": "proj", "location": "us-central1-b"}, ("project",), "project"),
        (
            "VllmStack",
            {"cluster": {"project": "proj", "location": "us-central1-b"}, "model": "meta-llama/Llama-3.1-8B"},
            ("cluster",),
            "cluster",
        ),
    ],
)
def test_an_output_for_a_plain_input_is_refused_by_name_before_anything_is_declared(component, inputs, secrets, path):
    with pytest.raises(Refused) as refused:
        construct(TpuStacksProvider(), f"tpu-stacks:index:{component}", "x", inputs, secrets=secrets)
    ((where, reason),) = refused.value.errors
    assert where == path and reason.startswith(f"{path}: got an output")
    assert "\n" not in reason and "plain value" in reason
    assert refused.value.declared == []  # not even the component itself


def test_an_output_nested_in_a_plain_object_is_refused_at_its_path():
    provider = TpuStacksProvider()
    cluster = {"project": "proj", "location": "us-central1-b", "slices": [{"generation": "v6e", "topology": None}]}
    cluster["slices"][0]["topology"] = pulumi.Output.from_input("2x4")
    definition = provider._component_defs["TpuCluster"]
    with pytest.raises(InputPropertyError) as refused:
        for name, prop in definition.inputs.items():
            provider.refuse_outputs(cluster.get(name), prop, name)
    assert refused.value.property_path == "slices[0].topology"


def test_secret_inputs_that_take_outputs_are_not_refused():
    inputs = {
        "cluster": CLUSTER,
        "model": "meta-llama/Llama-3.1-8B",
        "sourceRanges": CLIENTS,
        "hfToken": "hf_token_value",
        "replicas": {"min": 1, "max": 1},
    }
    state, _ = construct(TpuStacksProvider(), "tpu-stacks:index:VllmStack", "v", inputs, secrets=("hfToken",))
    assert state["modelId"] == "meta-llama/Llama-3.1-8B"
