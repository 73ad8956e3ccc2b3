"""Another language's program, as the plugin sees it: a gRPC `Construct` request in the schema's names.

The engine forwards a TypeScript (Go, C#, ...) program's `new VllmStack(...)` to the plugin as a
`ResourceProvider.Construct` request: the inputs a `Struct` under the schema's camelCase names, the
monitor the engine's gRPC address. Here the request goes to the servicer the plugin serves
(`pulumi.provider.server.ProviderServicer`, what `tpu_stacks.plugin.serve` runs), and the monitor is
a real gRPC server in this process that answers with the offline mocks. The response's state is what
the other language's SDK receives, in wire form (secrets still tagged).
"""

from __future__ import annotations

import asyncio
from concurrent import futures
from typing import Any

import grpc
import pulumi
from google.protobuf import empty_pb2, json_format
from pulumi.provider.server import ProviderServicer
from pulumi.runtime import proto, rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import engine_pb2_grpc, errors_pb2, resource_pb2, resource_pb2_grpc, status_pb2

from tests.mocks import RecordingMocks

SECRET_SIG = rpc._special_secret_sig  # the wire tag of a secret value
SIG_KEY = rpc._special_sig_key
_DELEGATED = (
    "GetDeploymentInfo",
    "Invoke",
    "ReadResource",
    "RegisterResource",
    "RegisterResourceOutputs",
    "RegisterPackage",
    "SignalAndWaitForShutdown",
)


class MonitorOverGrpc(resource_pb2_grpc.ResourceMonitorServicer):
    """pulumi's MockMonitor behind a real gRPC ResourceMonitor, for a provider that dials its monitor."""

    def __init__(self, mocks: RecordingMocks) -> None:
        self.monitor = MockMonitor(mocks)

    def SupportsFeature(self, request: Any, context: Any) -> Any:
        answer = self.monitor.SupportsFeature(request)  # an ad-hoc object in the SDK, a message on the wire
        return resource_pb2.SupportsFeatureResponse(hasSupport=answer.hasSupport)


for _name in _DELEGATED:
    setattr(MonitorOverGrpc, _name, lambda self, request, context, _name=_name: getattr(self.monitor, _name)(request))


class SilentEngine(engine_pb2_grpc.EngineServicer):
    """The engine's log and root-resource calls, answered and dropped."""

    def Log(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:
        from pulumi.runtime.proto import engine_pb2

        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request: Any, context: Any) -> Any:
        from pulumi.runtime.proto import engine_pb2

        return engine_pb2.SetRootResourceResponse()


class Refused(Exception):
    """The provider aborted the Construct call with invalid-argument errors, as the engine receives them."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__(errors)
        self.errors = errors
        self.declared: list[Any] = []


class CallContext:
    """The gRPC call context's `abort_with_status`: the InputPropertiesError details, decoded."""

    async def abort_with_status(self, status: Any) -> None:
        details = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
        found = errors_pb2.InputPropertiesError()
        details.details[0].Unpack(found)
        raise Refused([(error.property_path, error.reason) for error in found.errors])


def construct(
    provider: pulumi.provider.Provider,
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secrets: tuple[str, ...] = (),
) -> tuple[dict[str, Any], RecordingMocks]:
    """Send one Construct request with `inputs` (schema names; the keys in `secrets` sent as secrets,
    as a `pulumi.secret` or a secret config value is) and return the response's state as JSON (what
    the caller's SDK decodes) and what the component declared."""
    mocks = RecordingMocks()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(MonitorOverGrpc(mocks), server)
    engine_pb2_grpc.add_EngineServicer_to_server(SilentEngine(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    address = f"127.0.0.1:{port}"
    try:
        # In a thread of its own: the runtime's settings are context variables and the thread starts with
        # a fresh context and event loop, so the tests' own mocks in the main thread are left untouched.
        with futures.ThreadPoolExecutor(max_workers=1) as caller:
            request = _construct(provider, address, type_token, name, inputs, secrets)
            response = caller.submit(asyncio.run, request).result(timeout=120)
    except Refused as refused:
        refused.declared = mocks.resources  # what the component had declared when it was refused
        raise
    finally:
        server.stop(None)
    return json_format.MessageToDict(response.state), mocks


async def _construct(
    provider: pulumi.provider.Provider,
    address: str,
    type_token: str,
    name: str,
    inputs: dict[str, Any],
    secrets: tuple[str, ...],
) -> Any:
    struct = await rpc.serialize_properties(inputs, {})
    for key in secrets:  # the engine's wire form of a secret: {sig: <secret sig>, value: ...}
        struct[key] = {SIG_KEY: SECRET_SIG, "value": inputs[key]}
    request = proto.ConstructRequest(
        project="other-language",
        stack="dev",
        type=type_token,
        name=name,
        inputs=struct,
        monitorEndpoint=address,
        dryRun=False,
    )
    servicer = ProviderServicer(provider, [], engine_address=address)
    return await servicer.Construct(request, context=CallContext())


def reveal(value: Any) -> Any:
    """A wire value with its secret tags removed (`{sig, value}` becomes `value`)."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return reveal(value["value"])
        return {key: reveal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [reveal(item) for item in value]
    return value


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG
