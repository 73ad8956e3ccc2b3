"""What one offline run of a program recorded: the data every checker downstream reads.

Records hold the engine's view (URNs, parents, providers, dependencies, wire inputs), not Python
objects, so the policy driver, the manifest renderer and the JSON plan all judge the same thing a
real `pulumi preview` would send them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from google.protobuf import struct_pb2

from tpu_stacks_preview.config import StackConfig

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class ResourceOptionsRecord:
    """The resource options the engine (and a policy pack) can see."""

    protect: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool | None = None
    additional_secret_outputs: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    import_id: str = ""
    retain_on_delete: bool = False
    replace_on_changes: list[str] = field(default_factory=list)


@dataclass
class ResourceRecord:
    """One RegisterResource (or ReadResource) as the engine received it, transforms applied."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    remote: bool
    provider: str | None  # "<provider urn>::<id>", None for the default provider
    version: str
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    inputs: dict[str, Any]  # plain JSON, secrets "[secret]", unknowns "(known after apply)"
    secret_inputs: list[str]  # paths of inputs that were secret
    unknown_inputs: bool
    options: ResourceOptionsRecord
    id: str = ""
    read: bool = False
    outputs: dict[str, Any] | None = None  # register_outputs(), masked like inputs
    raw_inputs: struct_pb2.Struct = field(default_factory=struct_pb2.Struct, repr=False, compare=False)

    @property
    def depends_on(self) -> list[str]:
        """The explicit `dependsOn` URNs: what the resource depends on that none of its inputs carries
        (the engine receives explicit and input dependencies in one list)."""
        from_inputs = {urn for urns in self.property_dependencies.values() for urn in urns}
        return [urn for urn in self.dependencies if urn not in from_inputs]

    def options_document(self) -> dict[str, Any]:
        """The options as the engine receives them, in the plan document's (camelCase) spelling."""
        options = self.options
        return {
            "dependsOn": self.depends_on,
            "dependencies": self.dependencies,
            "ignoreChanges": sorted(options.ignore_changes),
            "customTimeouts": dict(sorted(options.custom_timeouts.items())),
            "protect": options.protect,
            "retainOnDelete": options.retain_on_delete,
            "deleteBeforeReplace": options.delete_before_replace,
            "replaceOnChanges": sorted(options.replace_on_changes),
        }

    @property
    def package(self) -> str:
        """The provider package of the type token (`kubernetes` for `kubernetes:apps/v1:Deployment`)."""
        return self.type.split(":", 1)[0]

    @property
    def is_provider(self) -> bool:
        return self.type.startswith("pulumi:providers:")


@dataclass
class InvokeRecord:
    """A data-source call the program made (args masked)."""

    token: str
    args: dict[str, Any]
    provider: str | None


@dataclass
class LogRecord:
    """A message the program logged through the engine (pulumi.log.warn and friends)."""

    severity: str
    message: str
    urn: str | None


@dataclass
class ProgramError:
    """Why a run failed, in one line for people plus the traceback for debugging.

    `kind` is "user" for a mistake in the user's input (tpu_stacks.errors.UserError, missing or
    mistyped config) and "program" for anything else.
    """

    message: str
    kind: Literal["user", "program"]
    detail: str = ""


@dataclass
class Capture:
    """The result of `run_program`: every registration, output, invoke and log, or the error."""

    config: StackConfig
    preview: bool
    resources: list[ResourceRecord] = field(default_factory=list)  # registration order
    stack_outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[InvokeRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    error: ProgramError | None = None
    seconds: float = 0.0

    @property
    def project(self) -> str:
        return self.config.project

    @property
    def stack(self) -> str:
        return self.config.stack

    @property
    def ok(self) -> bool:
        return self.error is None

    def by_urn(self) -> dict[str, ResourceRecord]:
        return {r.urn: r for r in self.resources}

    def sorted_resources(self) -> list[ResourceRecord]:
        """Registration order is not deterministic (outputs resolve concurrently); URN order is."""
        return sorted(self.resources, key=lambda r: r.urn)

    def of_type(self, type_token: str) -> list[ResourceRecord]:
        return [r for r in self.sorted_resources() if r.type == type_token]
