"""`examples/vllm-yaml`: a non-Python project of the plugin package, checked against the schema the plugin
serves and sent through its Construct with the project's config substituted."""

import json
import re
from pathlib import Path

import yaml

from tests.plugin_host import construct, is_secret
from tpu_stacks.plugin import TpuStacksProvider

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "vllm-yaml"
REFERENCE = re.compile(r"^\$\{(\w+)(?:\.(\w+))?\}$")
CONFIG = {"project": "proj", "hfToken": "hf_yaml_token"}


def project() -> dict:
    return yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())


def schema() -> dict:
    return json.loads(TpuStacksProvider().schema)


def check_properties(values: dict, properties: dict, types: dict, path: str) -> list[str]:
    """Names in `values` the schema does not know, at any depth (objects through their `$ref`)."""
    unknown = []
    for name, value in values.items():
        spec = properties.get(name)
        if spec is None:
            unknown.append(f"{path}{name}")
        elif isinstance(value, dict) and "$ref" in spec:
            inner = types[spec["$ref"].removeprefix("#/types/")]["properties"]
            unknown += check_properties(value, inner, types, f"{path}{name}.")
    return unknown


def test_the_project_uses_the_plugin_package_from_this_checkout():
    config = project()
    assert config["runtime"] == "yaml"
    assert (EXAMPLE / config["packages"]["tpu-stacks"] / "PulumiPlugin.yaml").is_file()
    assert config["config"]["hfToken"]["secret"] is True and "secret" not in config["config"]["project"]


def test_every_name_in_the_program_is_in_the_schema():
    config, served = project(), schema()
    components = {name: r for name, r in config["resources"].items() if r["type"].startswith("tpu-stacks:")}
    assert components
    for resource in components.values():
        definition = served["resources"][resource["type"]]
        unknown = check_properties(resource["properties"], definition["inputProperties"], served["types"], "")
        assert unknown == [], resource["type"]
    references = [REFERENCE.match(value) for value in config["outputs"].values()]
    references += [REFERENCE.match(config["resources"]["tpuCluster"]["properties"]["kubeconfig"])]
    for match in references:
        resource, output = match.groups()
        assert output in served["resources"][config["resources"][resource]["type"]]["properties"]
    # The secret config feeds only inputs the schema marks secret; plain inputs get plain config.
    vllm = components["vllm"]["properties"]
    assert vllm["hfToken"] == "${hfToken}"
    assert served["resources"]["tpu-stacks:index:VllmStack"]["inputProperties"]["hfToken"]["secret"] is True


def substitute(value, config: dict):
    if isinstance(value, dict):
        return {key: substitute(item, config) for key, item in value.items()}
    match = REFERENCE.match(value) if isinstance(value, str) else None
    return config[match.group(1)] if match and match.group(2) is None else value


def test_the_programs_inputs_construct_and_return_the_cluster():
    resource = project()["resources"]["vllm"]
    inputs = substitute(resource["properties"], CONFIG)
    state, mocks = construct(TpuStacksProvider(), resource["type"], "vllm", inputs, secrets=("hfToken",))
    assert state["clusterName"] == "tpu-cluster" and state["clusterEndpoint"] == "203.0.113.10"
    assert is_secret(state["kubeconfig"])
    (pool,) = [r for r in mocks.of_type("gcp:container/nodePool:NodePool") if r.name != "vllm-cluster-system"]
    assert pool.inputs["nodeConfig"]["machineType"].startswith("ct6e-")  # the v6e slice the example asks for
