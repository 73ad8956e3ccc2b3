"""Drive the policy pack the way the Pulumi engine does, on resources real code declared.

1. `capture(build)` runs component / SDK code under Pulumi's mocks and records each
   RegisterResource request at the monitor: wire-form inputs (secrets tagged, unknowns as the
   engine's sentinel, numbers as doubles), parent, dependencies, property dependencies,
   additional secret outputs and custom timeouts, as the engine would hand them to analyzers.
2. `Pack(config)` starts the pack's analyzer servicer (in-process, or any object with the same
   gRPC methods, e.g. a stub to `python policies`), replays GetAnalyzerInfo -> Configure with the
   engine's config reconciliation (schema defaults, then user config, then JSON-schema
   validation), and returns the diagnostics of Analyze (per resource) and AnalyzeStack.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pulumi
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime import proto
from pulumi.runtime.mocks import MockMonitor
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer

from tests.mocks import RecordingMocks

SIG_KEY = "4dabf18193072939515e22adb298388d"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""What the engine sends for a string input not known during preview."""
LEVELS = {
    proto.ADVISORY: "advisory",
    proto.MANDATORY: "mandatory",
    proto.DISABLED: "disabled",
    proto.REMEDIATE: "remediate",
}
LEVEL_CODES = {name: code for code, name in LEVELS.items()}


@dataclass
class Registration:
    """One RegisterResource request, as the engine would know the resource."""

    urn: str
    type: str
    name: str
    props: dict[str, Any]
    parent: str = ""
    custom: bool = True
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    secret_outputs: list[str] = field(default_factory=list)
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    """The customTimeouts option as the program gave it (Go durations, e.g. {"create": "65m"})."""


class RecordingMonitor(MockMonitor):
    """A mock monitor that keeps every registration request before answering it."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        if request.type != "pulumi:pulumi:Stack":
            self.registrations.append(
                Registration(
                    urn=self.make_urn(request.parent, request.type, request.name),
                    type=request.type,
                    name=request.name,
                    props=json_format.MessageToDict(request.object),
                    parent=request.parent,
                    custom=request.custom,
                    dependencies=list(request.dependencies),
                    property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                    secret_outputs=list(request.additionalSecretOutputs),
                    custom_timeouts={
                        key: getattr(request.customTimeouts, key)
                        for key in ("create", "update", "delete")
                        if getattr(request.customTimeouts, key)
                    },
                )
            )
        return super().RegisterResource(request)


def capture(build: Callable[[], Any], preview: bool = True) -> list[Registration]:
    """Run `build()` under fresh mocks (preview by default, as `pulumi preview` runs) and return
    every resource it registered."""
    mocks = RecordingMocks(preview=preview)
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, preview=preview, monitor=monitor)

    @pulumi.runtime.test
    def run() -> Any:
        result = build()
        return getattr(result, "kubeconfig", None) or pulumi.Output.from_input(None)

    run()
    return monitor.registrations


def raw(type_: str, name: str, props: dict[str, Any], **extra: Any) -> Registration:
    """A resource given directly in wire form (for inputs no SDK would produce, e.g. unknowns)."""
    return Registration(urn=f"urn:pulumi:stack::project::{type_}::{name}", type=type_, name=name, props=props, **extra)


def _downgrade_references(value: Any) -> Any:
    """Resource references make pulumi_policy's deserializer raise; the engine sends ids or URNs."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == RESOURCE_SIG:
            return value.get("id") or value.get("urn")
        return {k: _downgrade_references(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_downgrade_references(v) for v in value]
    return value


def _struct(data: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(_downgrade_references(data))
    return struct


def duration_seconds(text: str) -> float:
    """A Go duration ("1h5m", "90s") in seconds: the engine hands analyzers timeouts as seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(number) * units[unit] for number, unit in re.findall(r"(\d+(?:\.\d+)?)([hms])", text))


def _options(resource: Registration) -> Any:
    timeouts = proto.AnalyzerResourceOptions.CustomTimeouts(
        **{key: duration_seconds(value) for key, value in resource.custom_timeouts.items()}
    )
    return proto.AnalyzerResourceOptions(
        parent=resource.parent,
        additionalSecretOutputs=resource.secret_outputs,
        customTimeouts=timeouts if resource.custom_timeouts else None,
    )


def reconcile(info: Any, config: dict[str, Any] | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """The engine's policy-config reconciliation: schema defaults, initial config, user config
    ("all" first, then per policy: a level string or {enforcementLevel, ...settings}), validated
    against each policy's JSON schema. Raises jsonschema.ValidationError on a bad config."""
    result: dict[str, tuple[str, dict[str, Any]]] = {}
    schemas: dict[str, dict[str, Any]] = {}
    for policy in info.policies:
        properties = json_format.MessageToDict(policy.configSchema.properties)
        defaults = {k: v["default"] for k, v in properties.items() if "default" in v}
        result[policy.name] = (LEVELS[policy.enforcementLevel], defaults)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if policy.configSchema.required:
            schema["required"] = list(policy.configSchema.required)
        schemas[policy.name] = schema
    given = config or {}
    if isinstance(given.get("all"), str):
        result = {name: (given["all"], props) for name, (_, props) in result.items()}
    for name, value in given.items():
        if name == "all" or name not in result:
            continue
        level, props = result[name]
        if isinstance(value, str):
            level = value
        else:
            settings = dict(value)
            level = settings.pop("enforcementLevel", level)
            props = {**props, **settings}
        result[name] = (level, props)
    for name, (_, props) in result.items():
        if name in schemas:
            jsonschema.validate(props, schemas[name])
    return result


@dataclass(frozen=True)
class Diagnostic:
    policy: str
    level: str
    message: str
    """The violation message (without the policy description the SDK puts first)."""
    urn: str


class InProcess:
    """The pack's analyzer servicer called directly, with the gRPC method names."""

    def __init__(self) -> None:
        # Imported here: `capture` serves component tests too, where the pack is not on sys.path.
        from tpu_policies import DESCRIPTION, PACK_NAME, POLICIES

        self.servicer = _PolicyAnalyzerServicer(
            PACK_NAME, "0.0.1", POLICIES, EnforcementLevel.ADVISORY, None, DESCRIPTION
        )

    def __getattr__(self, method: str) -> Callable[[Any], Any]:
        return lambda request: getattr(self.servicer, method)(request, None)


class Pack:
    """The pack after GetAnalyzerInfo -> Configure, ready to analyze captured resources."""

    def __init__(self, config: dict[str, Any] | None = None, transport: Any | None = None) -> None:
        self.transport = transport or InProcess()
        self.info = self.transport.GetAnalyzerInfo(empty_pb2.Empty())
        self.config = reconcile(self.info, config)
        request = proto.ConfigureAnalyzerRequest()
        for name, (level, props) in self.config.items():
            entry = proto.PolicyConfig(enforcementLevel=LEVEL_CODES[level], properties=_struct(props))
            request.policyConfig[name].CopyFrom(entry)
        self.transport.Configure(request)

    def _diagnostics(self, response: Any, default_urn: str) -> list[Diagnostic]:
        found = []
        for diagnostic in response.diagnostics:
            message = diagnostic.message.removeprefix(diagnostic.description).lstrip("\n")
            level = LEVELS[diagnostic.enforcementLevel]
            found.append(Diagnostic(diagnostic.policyName, level, message, diagnostic.urn or default_urn))
        return found

    def analyze(self, resources: list[Registration]) -> list[Diagnostic]:
        """Analyze every resource, then the stack, as one preview does."""
        found: list[Diagnostic] = []
        for resource in resources:
            options = _options(resource)
            request = proto.AnalyzeRequest(
                urn=resource.urn,
                type=resource.type,
                name=resource.name,
                properties=_struct(resource.props),
                options=options,
            )
            found += self._diagnostics(self.transport.Analyze(request), resource.urn)
        stack = proto.AnalyzeStackRequest()
        for resource in resources:
            entry = stack.resources.add(
                urn=resource.urn,
                type=resource.type,
                name=resource.name,
                parent=resource.parent,
                properties=_struct(resource.props),
                dependencies=resource.dependencies,
            )
            entry.options.CopyFrom(_options(resource))
            for key, urns in resource.property_dependencies.items():
                entry.propertyDependencies[key].urns.extend(urns)
        found += self._diagnostics(self.transport.AnalyzeStack(stack), "")
        return found


def run(resources: list[Registration], config: dict[str, Any] | None = None) -> list[Diagnostic]:
    return Pack(config).analyze(resources)


def of(diagnostics: list[Diagnostic], policy: str) -> list[Diagnostic]:
    return [d for d in diagnostics if d.policy == policy]
