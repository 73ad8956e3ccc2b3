"""The plugin package: Pulumi's schema inference accepts every public component with its
inputs and outputs, so other languages can `pulumi package add` it."""

import inspect
import pkgutil
import runpy
from pathlib import Path

import pulumi
from pulumi.provider.experimental.analyzer import Analyzer

import tpu_stacks
from tpu_stacks.cluster.args import SliceArgs, TpuClusterArgs
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.vllm.args import VllmStackArgs
from tpu_stacks.vllm.spec import VllmSpec

COMPONENTS_DIR = Path(__file__).resolve().parents[1] / "components"


def entry_module() -> dict:
    return runpy.run_path(str(COMPONENTS_DIR / "__main__.py"), run_name="tpu_stacks_plugin")


def defined_components() -> set[type]:
    """Every ComponentResource subclass defined anywhere in the package (public or not)."""
    found = set()
    for info in pkgutil.walk_packages(tpu_stacks.__path__, "tpu_stacks."):
        module = __import__(info.name, fromlist=["_"])
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, pulumi.ComponentResource) and value.__module__ == info.name:
                found.add(value)
    return found


def test_plugin_manifest_declares_python():
    assert (COMPONENTS_DIR / "PulumiPlugin.yaml").read_text().strip().endswith("runtime: python")


def test_entry_module_exposes_every_public_component():
    namespace = entry_module()
    exposed = {v for v in namespace.values() if inspect.isclass(v) and issubclass(v, pulumi.ComponentResource)}
    assert exposed == defined_components()  # no component is left out of the plugin
    assert set(namespace["COMPONENTS"]) == exposed
    assert {"TpuCluster", "WorkloadIdentity", "CustomMetricsAdapter", "VllmStack"} <= {c.__name__ for c in exposed}
    for component in exposed:  # the token the engine registers is the one the schema names
        module = __import__(component.__module__, fromlist=["TYPE"])
        assert module.TYPE == f"tpu-stacks:index:{component.__name__}"


def test_schema_lists_components_with_inputs_and_outputs():
    result = Analyzer("tpu-stacks").analyze(entry_module()["COMPONENTS"])
    components = result["component_definitions"]
    cluster = components["TpuCluster"]
    assert {"project", "location", "slices", "mode", "universe", "existing"} <= set(cluster.inputs)
    assert not cluster.inputs["project"].optional and cluster.inputs["slices"].optional
    assert {
        "clusterName",
        "location",
        "endpoint",
        "workloadPool",
        "kubeconfig",
        "kubernetesProvider",
        "slices",
        "nodeServiceAccount",
    } == set(cluster.outputs)
    assert cluster.outputs["kubernetesProvider"].ref.endswith("#/resources/pulumi:providers:kubernetes")
    identity = components["WorkloadIdentity"]
    assert {"project", "ksaName", "mode", "bucketGrants", "projectRoles"} <= set(identity.inputs)
    assert {"ksaName", "namespace", "member", "gsaEmail"} == set(identity.outputs)
    assert {"SliceArgs", "SliceInfo", "AutoscalingArgs", "BucketGrantArgs"} <= set(result["type_definitions"])
    for definition in components.values():
        assert definition.description, f"{definition.name} needs a docstring: it becomes the SDK's documentation"


def test_component_types_are_in_the_package_namespace():
    for component in defined_components():
        source = inspect.getsource(component)  # __init__ or the helper it calls (TpuCluster._declare)
        assert "super().__init__(TYPE" in source
        assert inspect.getmodule(component).TYPE == f"tpu-stacks:index:{component.__name__}"


def test_schema_args_and_validated_spec_have_the_same_fields():
    """The TypedDicts (schema) and the pydantic specs (validation) must not drift apart."""
    assert set(TpuClusterArgs.__annotations__) == set(ClusterSpec.model_fields)
    assert set(SliceArgs.__annotations__) == set(SliceSpec.model_fields)
    secrets_and_cluster = {"cluster", "hf_token", "api_key_secret"}
    assert set(VllmStackArgs.__annotations__) - secrets_and_cluster == set(VllmSpec.model_fields)


def test_vllm_stack_schema():
    result = Analyzer("tpu-stacks").analyze(entry_module()["COMPONENTS"])
    vllm = result["component_definitions"]["VllmStack"]
    assert {"cluster", "model", "tpuGeneration", "hfToken", "exposure"} <= set(vllm.inputs)
    assert not vllm.inputs["model"].optional
    outputs = {
        *("serviceAddress", "baseUrl", "modelId", "servedSlice", "weightsBucket", "curl", "readyReplicas"),
        "monitoring",  # the dashboard and the console pages to open first
    }
    assert outputs == set(vllm.outputs)
