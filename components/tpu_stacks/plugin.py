"""The components the plugin package publishes to other languages, and the provider that serves them.

A component is public when it is in `SHARED_COMPONENTS` or is a registered workload's (registry.py); a
test checks that every ComponentResource defined in the package is public (so none is forgotten) and
that each declares its type token as `tpu-stacks:index:<Class>`.

`TpuStacksProvider` is pulumi's experimental `ComponentProvider` (the schema inferred from the type
hints) with what other languages' SDKs need and 3.272.0 does not do: the schema carries the package's
version (from `pyproject.toml`), a namespace and its secrets, and the state `construct` returns
carries arrays and maps of objects in the schema's camelCase, as it already does for a single object.
docs/sdk.md says what a user of another language sees.
"""

from __future__ import annotations

import inspect
import json
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.provider import ConstructResult, main
from pulumi.provider.experimental.analyzer import ComponentDefinition, PropertyDefinition
from pulumi.provider.experimental.component import ComponentProvider

from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.gcp.identity import WorkloadIdentity
from tpu_stacks.k8s.metrics_adapter import CustomMetricsAdapter
from tpu_stacks.registry import workloads

PACKAGE = "tpu-stacks"
NAMESPACE = "tpu-stacks"
"""The publisher namespace the schema declares (the package schema's `namespace`), next to its name."""
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

SHARED_COMPONENTS: tuple[type[pulumi.ComponentResource], ...] = (CustomMetricsAdapter, TpuCluster, WorkloadIdentity)
"""The public components that are no workload; each registered workload (registry.py) adds its own."""

SECRET_OUTPUTS = frozenset({"kubeconfig"})
"""Outputs (schema names) the components return as secrets."""


def public_components() -> list[type[pulumi.ComponentResource]]:
    """The shared components and every registered workload's, by class name (the schema's order)."""
    found = [*SHARED_COMPONENTS, *(workload.component.load() for workload in workloads())]
    return sorted(found, key=lambda component: component.__name__)


COMPONENTS: tuple[type[pulumi.ComponentResource], ...] = tuple(public_components())
"""The public components when the plugin is loaded (`public_components()` sees a workload registered later)."""


def package_version() -> str:
    """The version `components/pyproject.toml` declares (the source of the installed distribution's too).

    The plugin runs from its source directory, where the file is; an installed copy without it reads
    the distribution's metadata, which pip wrote from the same file."""
    if PYPROJECT.is_file():
        return tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    return metadata.version(PACKAGE)


def secret_inputs(component: type[pulumi.ComponentResource]) -> frozenset[str]:
    """The inputs (schema names) a component keeps only in Kubernetes Secrets and never shows: what its
    spec declares secret (`INPUTS`), as its generated Args module lists them (scripts/gen_args.py)."""
    args_type = inspect.signature(component.__init__).parameters["args"].annotation
    return getattr(sys.modules[args_type.__module__], "SECRET_INPUTS", frozenset())


def mark_secrets(schema: dict[str, Any], components: list[type[pulumi.ComponentResource]]) -> dict[str, Any]:
    """Set `secret: true` on the secret inputs and outputs of every resource of the schema.

    The inference of pulumi 3.272.0 has no way to say a property is secret (`PropertyDefinition`
    has no such field); the schema does (`secret` on a property), and the code generators wrap
    such inputs in secrets and list such outputs as additional secret outputs."""
    secrets = {f"{PACKAGE}:index:{component.__name__}": secret_inputs(component) for component in components}
    for token, resource in schema.get("resources", {}).items():
        for name, spec in resource.get("inputProperties", {}).items():
            if name in secrets.get(token, ()):
                spec["secret"] = True
        for name, spec in resource.get("properties", {}).items():
            if name in SECRET_OUTPUTS:
                spec["secret"] = True
    return schema


class TpuStacksProvider(ComponentProvider):
    """The component provider other languages talk to through `construct`."""

    def __init__(self, components: list[type[pulumi.ComponentResource]] | None = None) -> None:
        components = components or public_components()
        super().__init__(components, PACKAGE, NAMESPACE, package_version())
        self.schema = json.dumps(mark_secrets(json.loads(self.schema or "{}"), components))

    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: pulumi.Inputs,
        options: pulumi.ResourceOptions | None = None,
    ) -> ConstructResult:
        """Refuse an output where the schema says plain, before the component declares anything.

        A plain input is read at construction (it sizes the slice and names resources), so it must be
        a value known at preview. A typed SDK cannot pass an output there, but YAML or a secret config
        value can: the engine then sends an Output, which the spec cannot read. The refusal names the
        property as the caller wrote it; the engine reports it against that property."""
        component_def = self._component_defs.get(resource_type.rsplit(":", maxsplit=1)[-1])
        if component_def is not None:
            for schema_name, prop in component_def.inputs.items():
                self.refuse_outputs(inputs.get(schema_name), prop, schema_name)
        return super().construct(name, resource_type, inputs, options)

    def refuse_outputs(self, value: Any, prop: PropertyDefinition, path: str) -> None:
        if isinstance(value, pulumi.Output):
            if prop.plain:
                raise InputPropertyError(path, plain_input_message(path))
            return
        if prop.ref and isinstance(value, dict):
            type_def = self.get_type_definition(prop)
            for schema_name, inner in (type_def.properties if type_def else {}).items():
                self.refuse_outputs(value.get(schema_name), inner, f"{path}.{schema_name}")
        elif prop.items is not None and isinstance(value, list):
            for index, item in enumerate(value):
                self.refuse_outputs(item, prop.items, f"{path}[{index}]")
        elif prop.additional_properties is not None and isinstance(value, dict):
            for key, item in value.items():
                self.refuse_outputs(item, prop.additional_properties, f"{path}.{key}")

    def get_state(self, instance: pulumi.ComponentResource, component_def: ComponentDefinition) -> dict[str, Any]:
        """The outputs under their schema names, every nested object's keys renamed too.

        The SDK's own `get_state` renames the keys of an output that is one object, but passes a list
        or a map of objects through as Python wrote it (snake_case), against the camelCase schema the
        other languages' SDKs read: `TpuCluster.slices` reached them as `pool_name`. The follow-up
        upstream, pulumi/pulumi#18882 ("ensure that output names are mapped recursively"), is closed,
        yet 3.272.0 still maps only a top-level object (tests/test_plugin_construct.py shows both)."""
        state: dict[str, Any] = {}
        for schema_name, prop in component_def.outputs.items():
            value = getattr(instance, component_def.outputs_mapping[schema_name], None)
            if value is not None:
                state[schema_name] = self.to_schema(value, prop)
        return state

    def to_schema(self, value: Any, prop: PropertyDefinition) -> Any:
        """`value` (Python names) as the schema describes `prop`: objects' keys in camelCase at any depth,
        enums as their values; a map's own keys (labels, node selectors) are data and stay as they are."""
        if isinstance(value, pulumi.Output):
            return value.apply(lambda resolved: self.to_schema(resolved, prop))
        if value is None:
            return None
        if prop.ref:
            type_def = self.get_type_definition(prop)
            if type_def is None:  # a resource reference, Any, an asset: nothing to rename
                return value
            if type_def.enum:
                return getattr(value, "value", value)
            renamed = {}
            for schema_name, inner in type_def.properties.items():
                field = value.get(type_def.properties_mapping[schema_name])
                if field is not None:
                    renamed[schema_name] = self.to_schema(field, inner)
            return renamed
        if prop.items is not None and isinstance(value, (list, tuple)):
            return [self.to_schema(item, prop.items) for item in value]
        if prop.additional_properties is not None and isinstance(value, dict):
            return {key: self.to_schema(item, prop.additional_properties) for key, item in value.items()}
        return value


def plain_input_message(path: str) -> str:
    return (
        f"{path}: got an output (a secret or a value not known until deployment); it is read when the "
        "component is constructed, so give a plain value: a literal or a plain, non-secret config value"
    )


def serve(args: list[str]) -> None:
    """Serve the components over gRPC, as the Python language host runs the plugin
    (`python <plugin dir> <engine address>`, since the directory has a `__main__.py`)."""
    main(TpuStacksProvider(), args)
