"""A resource monitor that records what a real engine would receive, and behaves like one.

`MockMonitor` (the SDK's test double) is the documented extension point, but three of its
shortcuts would make the offline plan lie: it keeps only the parent's own type in URNs, silently
overwrites a duplicate URN, and never runs transforms. This subclass computes engine URNs, rejects
duplicates with the engine's message, and calls transforms back over the SDK's callback server
(own, then parents', then stack transforms, as the engine orders them). It records at the monitor,
not in `Mocks.new_resource`, because only here are parent, provider and dependencies visible.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs
from pulumi.runtime.proto import callback_pb2, callback_pb2_grpc, resource_pb2

from tpu_stacks_preview.capture import (
    STACK_TYPE,
    InvokeRecord,
    LogRecord,
    ResourceOptionsRecord,
    ResourceRecord,
)
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.mocks import OfflineMocks
from tpu_stacks_preview.wire import PlainValue, dict_to_struct, struct_to_dict

_SEVERITIES = {0: "debug", 1: "info", 2: "warning", 3: "error"}


class DuplicateUrnError(Exception):
    """Two resources with the same URN: the engine refuses the second registration."""


class TransformError(Exception):
    """A resource transform failed when the monitor called it back."""


def qualified_type(urn: str) -> str:
    """The type chain of a URN (`parent$child`), the third `::` field."""
    return urn.split("::")[2]


def engine_urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    """The URN the engine gives: the parent's whole type chain, minus the root stack's type."""
    if parent:
        parent_type = qualified_type(parent)
        if parent_type != STACK_TYPE:
            type_ = f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


class CaptureEngine:
    """The engine service: only logging matters offline."""

    def __init__(self) -> None:
        self.logs: list[LogRecord] = []

    def Log(self, request: Any) -> None:  # noqa: N802 - gRPC method name
        if request.severity == 0:  # the SDK's own debug chatter
            return
        self.logs.append(LogRecord(_SEVERITIES.get(request.severity, "info"), request.message, request.urn or None))

    def RequirePulumiVersion(self, request: Any) -> None:  # noqa: N802
        """Offline there is no CLI version to disagree with."""


class RunListener(Protocol):
    """Told of each registration as the engine records it, and of a run the engine starts again (a secret filled):
    the policy pack judges a preview's resources while the program still runs (policy.py `StreamedAnalysis`)."""

    def registered(self, record: ResourceRecord, config: StackConfig, records: Mapping[str, ResourceRecord]) -> None:
        """`records`: every registration so far, this one's explicit provider among them."""

    def restarted(self, config: StackConfig) -> None:
        """The run stopped on a secret and starts again with `config`: what was registered before does not count."""


class CaptureMonitor(MockMonitor):
    """Records registrations, outputs and invokes in engine form; see the module docstring."""

    def __init__(self, mocks: OfflineMocks, config: StackConfig, listener: RunListener | None = None) -> None:
        super().__init__(mocks)
        self.config = config
        self.listener = listener
        self.records: dict[str, ResourceRecord] = {}
        self.invokes: list[InvokeRecord] = []
        self.stack_urn = ""
        self._lock = threading.Lock()
        self._stack_callbacks: list[callback_pb2.Callback] = []
        self._own_callbacks: dict[str, list[callback_pb2.Callback]] = {}
        self._parents: dict[str, str] = {}
        self._component_providers: dict[str, dict[str, str]] = {}
        self._channels: dict[str, grpc.Channel] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return engine_urn(self.config.stack, self.config.project, parent, type_, name)

    def close(self) -> None:
        """Close the callback channels opened for transforms."""
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

    # -- registration ---------------------------------------------------------------------------

    def RegisterResource(self, request: Any) -> resource_pb2.RegisterResourceResponse:  # noqa: N802
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == STACK_TYPE and not request.parent:
            self._add(self._record(request, urn, request.object, None, ""))
            self.stack_urn = urn
            return resource_pb2.RegisterResourceResponse(urn=urn)

        with self._lock:
            self._parents[urn] = request.parent
            self._own_callbacks[urn] = list(request.transforms)
        props, options = self._run_transforms(request, urn)
        provider = self._resolve_provider(request, options)
        if not request.custom:
            self._remember_component_providers(request, urn, options)

        inputs = struct_to_dict(props)
        resource_id, state = self.mocks.new_resource(
            MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=inputs,
                provider=provider or "",
                resource_id=request.importId,
                custom=request.custom,
            )
        )
        record = self._record(request, urn, props, options, resource_id or "")
        record.provider = provider
        self._add(record)
        with self._lock:
            self.resources[urn] = MockMonitor.ResourceRegistration(urn, resource_id or "", state)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=resource_id or "", object=dict_to_struct(state))

    def ReadResource(self, request: Any) -> resource_pb2.ReadResourceResponse:  # noqa: N802
        urn = self.make_urn(request.parent, request.type, request.name)
        _, state = self.mocks.new_resource(
            MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=struct_to_dict(request.properties),
                provider=request.provider,
                resource_id=request.id,
                custom=True,
            )
        )
        record = self._record(request, urn, request.properties, None, request.id)
        record.read = True
        record.provider = request.provider or None
        self._add(record, analysed=False)  # the engine analyses a registration, not a read (policy_stream.py)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=dict_to_struct(state))

    def RegisterResourceOutputs(self, request: Any) -> empty_pb2.Empty:  # noqa: N802
        outputs = PlainValue(struct_to_dict(request.outputs)).value
        with self._lock:
            record = self.records.get(request.urn)
            if record is not None:
                record.outputs = outputs
        return empty_pb2.Empty()

    def Invoke(self, request: Any) -> resource_pb2.ResourceInvokeResponse:  # noqa: N802
        args = struct_to_dict(request.args)
        if request.tok == "pulumi:pulumi:getResource":
            return super().Invoke(request)
        with self._lock:
            self.invokes.append(InvokeRecord(request.tok, PlainValue(args).value, request.provider or None))
        result = self.mocks.call(MockCallArgs(token=request.tok, args=args, provider=request.provider))
        return resource_pb2.ResourceInvokeResponse(**{"return": dict_to_struct(result)})

    def SignalAndWaitForShutdown(self, request: Any) -> empty_pb2.Empty:  # noqa: N802
        """The program is done: hang up on the callback server before the SDK stops it."""
        self.close()
        return empty_pb2.Empty()

    def RegisterStackTransform(self, request: Any) -> empty_pb2.Empty:  # noqa: N802
        with self._lock:
            self._stack_callbacks.append(request)
        return empty_pb2.Empty()

    # -- helpers ---------------------------------------------------------------------------------

    def _add(self, record: ResourceRecord, analysed: bool = True) -> None:
        with self._lock:
            if record.urn in self.records:
                raise DuplicateUrnError(f"Duplicate resource URN '{record.urn}'; try giving it a unique name")
            self.records[record.urn] = record
        if self.listener is not None and analysed:  # complete as registered: its inputs, options and provider
            self.listener.registered(record, self.config, self.records)

    def _record(
        self,
        request: Any,
        urn: str,
        props: struct_pb2.Struct,
        options: resource_pb2.TransformResourceOptions | None,
        resource_id: str,
    ) -> ResourceRecord:
        plain = PlainValue(struct_to_dict(props))
        raw = struct_pb2.Struct()
        raw.CopyFrom(props)
        deps = list(options.depends_on) if options is not None else list(getattr(request, "dependencies", []))
        prop_deps = {k: sorted(v.urns) for k, v in getattr(request, "propertyDependencies", {}).items()}
        return ResourceRecord(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            custom=bool(getattr(request, "custom", True)),
            remote=bool(getattr(request, "remote", False)),
            provider=None,
            version=(options.version if options is not None else request.version) or "",
            dependencies=sorted(set(deps)),
            property_dependencies=prop_deps,
            inputs=plain.value,
            secret_inputs=plain.secret_paths,
            unknown_inputs=plain.has_unknowns,
            options=self._options(request, options),
            id=resource_id,
            raw_inputs=raw,
        )

    @staticmethod
    def _options(request: Any, options: resource_pb2.TransformResourceOptions | None) -> ResourceOptionsRecord:
        source = options if options is not None else request
        if not hasattr(source, "ignore_changes") and not hasattr(source, "ignoreChanges"):
            return ResourceOptionsRecord()

        def field(snake: str, camel: str) -> Any:
            return getattr(source, snake) if options is not None else getattr(request, camel, None)

        timeouts = field("custom_timeouts", "customTimeouts")
        dbr_defined = (
            options.HasField("delete_before_replace")
            if options is not None
            else bool(getattr(request, "deleteBeforeReplaceDefined", False))
        )
        return ResourceOptionsRecord(
            protect=bool(field("protect", "protect")),
            ignore_changes=list(field("ignore_changes", "ignoreChanges") or []),
            delete_before_replace=bool(field("delete_before_replace", "deleteBeforeReplace")) if dbr_defined else None,
            additional_secret_outputs=list(field("additional_secret_outputs", "additionalSecretOutputs") or []),
            aliases=[a.urn for a in (field("aliases", "aliases") or []) if a.urn],
            custom_timeouts={
                k: getattr(timeouts, k) for k in ("create", "update", "delete") if timeouts and getattr(timeouts, k)
            },
            import_id=str(getattr(request, "importId", "") or ""),
            retain_on_delete=bool(field("retain_on_delete", "retainOnDelete")),
            replace_on_changes=list(field("replace_on_changes", "replaceOnChanges") or []),
        )

    def _resolve_provider(self, request: Any, options: resource_pb2.TransformResourceOptions | None) -> str | None:
        """The engine's rule: explicit provider, else `providers[pkg]`, else the component parent's."""
        explicit = options.provider if options is not None else request.provider
        if explicit or not (request.custom or request.remote) or request.type.startswith("pulumi:providers:"):
            return explicit or None
        package = request.type.split(":", 1)[0]
        providers = dict(options.providers if options is not None else request.providers)
        if package in providers:
            return providers[package]
        with self._lock:
            return self._component_providers.get(request.parent, {}).get(package)

    def _remember_component_providers(
        self, request: Any, urn: str, options: resource_pb2.TransformResourceOptions | None
    ) -> None:
        providers = dict(options.providers if options is not None else request.providers)
        with self._lock:
            for package, ref in self._component_providers.get(request.parent, {}).items():
                providers.setdefault(package, ref)
            self._component_providers[urn] = providers

    # -- transforms ------------------------------------------------------------------------------

    def _transform_chain(self, urn: str) -> list[callback_pb2.Callback]:
        with self._lock:
            chain = list(self._own_callbacks.get(urn, []))
            parent = self._parents.get(urn, "")
            while parent:
                chain.extend(self._own_callbacks.get(parent, []))
                parent = self._parents.get(parent, "")
            chain.extend(self._stack_callbacks)
        return chain

    def _run_transforms(
        self, request: Any, urn: str
    ) -> tuple[struct_pb2.Struct, resource_pb2.TransformResourceOptions | None]:
        chain = self._transform_chain(urn)
        if not chain:
            return request.object, None
        options = resource_pb2.TransformResourceOptions(
            depends_on=request.dependencies,
            ignore_changes=request.ignoreChanges,
            replace_on_changes=request.replaceOnChanges,
            version=request.version,
            aliases=request.aliases,
            provider=request.provider,
            providers=request.providers,
            plugin_download_url=request.pluginDownloadURL,
            deleted_with=request.deletedWith,
            additional_secret_outputs=request.additionalSecretOutputs,
            plugin_checksums=request.pluginChecksums,
        )
        if request.HasField("protect"):
            options.protect = request.protect
        if request.HasField("retainOnDelete"):
            options.retain_on_delete = request.retainOnDelete
        if request.deleteBeforeReplaceDefined or request.deleteBeforeReplace:
            options.delete_before_replace = request.deleteBeforeReplace
        if request.HasField("customTimeouts"):
            options.custom_timeouts.CopyFrom(request.customTimeouts)
        props = request.object
        for callback in chain:
            payload = resource_pb2.TransformRequest(
                type=request.type,
                name=request.name,
                custom=request.custom,
                parent=request.parent,
                properties=props,
                options=options,
            ).SerializeToString()
            response = resource_pb2.TransformResponse.FromString(self._call_back(callback, payload))
            if response.HasField("properties"):
                props = response.properties
            if response.HasField("options"):
                options = response.options
        return props, options

    def _call_back(self, callback: callback_pb2.Callback, payload: bytes) -> bytes:
        """Call the SDK's callback server over gRPC, as the engine does."""
        with self._lock:
            channel = self._channels.get(callback.target)
            if channel is None:
                channel = self._channels[callback.target] = grpc.insecure_channel(callback.target)
        stub = callback_pb2_grpc.CallbacksStub(channel)
        try:
            reply = stub.Invoke(callback_pb2.CallbackInvokeRequest(token=callback.token, request=payload))
        except grpc.RpcError as error:
            raise TransformError(error.details()) from None
        return reply.response
