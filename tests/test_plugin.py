"""The plugin package: Pulumi's schema inference accepts every public component with its
inputs and outputs, so other languages can `pulumi package add` it."""

import inspect
import json
import pkgutil
import re
import runpy
import sys
import tomllib
from inspect import isabstract
from pathlib import Path

import pulumi
from pulumi.provider.experimental.analyzer import Analyzer

import tpu_stacks
from tpu_stacks.cluster.args import SliceArgs, TpuClusterArgs
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.lifecycle.component import WorkloadComponent
from tpu_stacks.plugin import TpuStacksProvider
from tpu_stacks.vllm.args import VllmStackArgs
from tpu_stacks.vllm.spec import VllmSpec

COMPONENTS_DIR = Path(__file__).resolve().parents[1] / "components"
CLUSTER_OUTPUTS = {"clusterName", "clusterEndpoint", "kubeconfig"}


def entry_module() -> dict:
    return runpy.run_path(str(COMPONENTS_DIR / "__main__.py"), run_name="tpu_stacks_plugin")


def defined_components() -> set[type]:
    """Every ComponentResource subclass defined anywhere in the package (public or not)."""
    found = set()
    for info in pkgutil.walk_packages(tpu_stacks.__path__, "tpu_stacks."):
        module = __import__(info.name, fromlist=["_"])
        for _, value in inspect.getmembers(module, inspect.isclass):
            # an abstract base (the workload lifecycle, lifecycle/component.py) is no component of its own
            if issubclass(value, pulumi.ComponentResource) and value.__module__ == info.name and not isabstract(value):
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
        token = inspect.getmodule(component).TYPE
        assert token == f"tpu-stacks:index:{component.__name__}"
        if issubclass(component, WorkloadComponent):  # its class line names the token the lifecycle registers
            assert "token=TYPE" in source.split("\n", 1)[0] and component._token == token
        else:
            assert "super().__init__(TYPE" in source


def test_schema_args_and_validated_spec_have_the_same_fields():
    """The TypedDicts (schema) are generated from the pydantic specs (validation, scripts/gen_args.py):
    a spec's fields, plus the component inputs it declares (`INPUTS`)."""
    assert set(TpuClusterArgs.__annotations__) == set(ClusterSpec.model_fields)
    assert set(SliceArgs.__annotations__) == set(SliceSpec.model_fields)
    inputs = {item.name for item in VllmSpec.INPUTS}
    assert inputs == {"cluster", "hf_token", "api_key_secret"}
    assert set(VllmStackArgs.__annotations__) - inputs == set(VllmSpec.model_fields)


def test_vllm_stack_schema():
    result = Analyzer("tpu-stacks").analyze(entry_module()["COMPONENTS"])
    vllm = result["component_definitions"]["VllmStack"]
    assert {"cluster", "model", "tpuGeneration", "hfToken", "exposure"} <= set(vllm.inputs)
    assert not vllm.inputs["model"].optional
    outputs = {
        *(
            "serviceAddress",
            "baseUrl",
            "modelId",
            "servedSlice",
            "weightsBucket",
            "curl",
            "readyReplicas",
            "imageBuild",
        ),
        "monitoring",  # the dashboard and the console pages to open first
    }
    assert outputs | CLUSTER_OUTPUTS == set(vllm.outputs)


def provider_schema() -> dict:
    """The schema the plugin serves (`GetSchema`), from the provider the entry point runs."""
    return json.loads(TpuStacksProvider(entry_module()["COMPONENTS"]).schema)


def test_schema_version_is_the_pyproject_version_and_has_a_namespace():
    declared = tomllib.loads((COMPONENTS_DIR / "pyproject.toml").read_text())["project"]["version"]
    schema = provider_schema()
    assert schema["version"] == declared and declared != "0.0.0"
    assert schema["name"] == "tpu-stacks" and schema["namespace"] == "tpu-stacks"
    assert TpuStacksProvider().version == declared  # the version the provider reports to the engine


def test_entry_point_serves_the_package_provider(monkeypatch):
    served = []
    monkeypatch.setattr("tpu_stacks.plugin.main", lambda provider, args: served.append((provider, args)))
    monkeypatch.setattr(sys, "argv", [str(COMPONENTS_DIR), "127.0.0.1:12345"])
    runpy.run_path(str(COMPONENTS_DIR / "__main__.py"), run_name="__main__")
    ((provider, args),) = served
    assert isinstance(provider, TpuStacksProvider) and args == ["127.0.0.1:12345"]
    assert json.loads(provider.schema)["version"] != "0.0.0"


def test_every_workload_exposes_its_cluster_in_the_schema():
    resources = provider_schema()["resources"]
    for workload in ("VllmStack", "SaxmlStack", "JetStreamStack", "RayTrainStack"):
        outputs = resources[f"tpu-stacks:index:{workload}"]["properties"]
        assert CLUSTER_OUTPUTS <= set(outputs), workload
        assert all(outputs[name]["type"] == "string" and outputs[name].get("description") for name in CLUSTER_OUTPUTS)
        assert outputs["kubeconfig"]["secret"] is True and "secret" not in outputs["clusterName"]
        assert CLUSTER_OUTPUTS <= set(resources[f"tpu-stacks:index:{workload}"]["required"]), workload


def test_secrets_are_marked_in_the_schema_and_nothing_else_is():
    resources = provider_schema()["resources"]
    secret_inputs = {
        (token.split(":")[-1], name)
        for token, resource in resources.items()
        for name, spec in resource["inputProperties"].items()
        if spec.get("secret")
    }
    assert secret_inputs == {
        ("VllmStack", "hfToken"),
        ("VllmStack", "apiKeySecret"),
        ("JetStreamStack", "hfToken"),
        ("SglangStack", "hfToken"),
    }
    secret_outputs = {
        (token.split(":")[-1], name)
        for token, resource in resources.items()
        for name, spec in resource["properties"].items()
        if spec.get("secret")
    }
    workloads = {"TpuCluster", "VllmStack", "SaxmlStack", "JetStreamStack", "RayTrainStack", "SglangStack"}
    assert secret_outputs == {(workload, "kubeconfig") for workload in workloads}


def test_plain_inputs_are_plain_in_the_schema_and_secrets_accept_outputs():
    """What sizes the slice is read at construction: a typed SDK takes a plain value there (the compiler
    refuses an Output); the secrets are `pulumi.Input`, so a config secret or an ESC value can be given."""
    vllm = provider_schema()["resources"]["tpu-stacks:index:VllmStack"]["inputProperties"]
    plain = {name for name, spec in vllm.items() if spec.get("plain")}
    assert {"cluster", "model", "tpuGeneration", "topology", "maxModelLen", "replicas"} <= plain
    assert set(vllm) - plain == {"hfToken", "apiKeySecret"}
    cluster = provider_schema()["types"]["tpu-stacks:index:TpuClusterArgs"]["properties"]
    assert all(spec.get("plain") for spec in cluster.values())


def test_the_typescript_example_in_docs_uses_only_schema_names():
    text = (COMPONENTS_DIR.parent / "docs" / "sdk.md").read_text()
    (snippet,) = re.findall(r"```typescript\n(.*?)```", text, re.S)
    schema = provider_schema()
    vllm = schema["resources"]["tpu-stacks:index:VllmStack"]
    used_outputs = set(re.findall(r"\bvllm\.(\w+)", snippet))
    assert used_outputs and used_outputs <= set(vllm["properties"])
    call = snippet[snippet.index("new tpuStacks.VllmStack(") :]
    call = call[: call.index("});")]
    assert set(re.findall(r"^ {4}(\w+):", call, re.M)) <= set(vllm["inputProperties"])
    (cluster_keys,) = re.findall(r"cluster: \{(.*?)\}", call)
    cluster_args = schema["types"]["tpu-stacks:index:TpuClusterArgs"]["properties"]
    assert set(re.findall(r"(\w+):", cluster_keys)) <= set(cluster_args)
