"""The Analyzer requests a policy pack receives for one offline run: every resource as the engine
would send it (`AnalyzeRequest`: type, properties, options, provider) and the whole stack
(`AnalyzeStackRequest`), built from the run's capture. `policy.py` drives the pack with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.runtime.proto import analyzer_pb2

from tpu_stacks_preview.capture import Capture, ResourceRecord
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.wire import (
    OUTPUT_SIG,
    RESOURCE_SIG,
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN,
    dict_to_struct,
    struct_to_dict,
)


def _downgrade(value: Any) -> Any:
    """What the engine marshals for an analyzer: no resource references, no output values."""
    if isinstance(value, list):
        return [_downgrade(v) for v in value]
    if not isinstance(value, dict):
        return value
    sig = value.get(SIG_KEY)
    if sig == RESOURCE_SIG:
        if "id" in value:  # a custom resource: its id (unknown until created)
            return value.get("id") or UNKNOWN
        return value.get("urn", "")
    if sig == OUTPUT_SIG:
        inner = _downgrade(value["value"]) if "value" in value else UNKNOWN
        return {SIG_KEY: SECRET_SIG, "value": inner} if value.get("secret") else inner
    if sig == SECRET_SIG:
        return {SIG_KEY: SECRET_SIG, "value": _downgrade(value.get("value"))}
    return {k: _downgrade(v) for k, v in value.items()}


def _properties(record: ResourceRecord) -> Any:
    return dict_to_struct(_downgrade(struct_to_dict(record.raw_inputs)))


def _timeout_seconds(text: str) -> float:
    """A Go duration ("1h30m", "90s") in seconds, as AnalyzerResourceOptions carries timeouts."""
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    for char in text:
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total, number = total + float(number) * units[char], ""
    return total


def _options(record: ResourceRecord) -> analyzer_pb2.AnalyzerResourceOptions:
    opts = record.options
    timeouts = analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(
        **{k: _timeout_seconds(v) for k, v in opts.custom_timeouts.items()}
    )
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=opts.protect,
        ignoreChanges=opts.ignore_changes,
        deleteBeforeReplace=bool(opts.delete_before_replace),
        deleteBeforeReplaceDefined=opts.delete_before_replace is not None,
        additionalSecretOutputs=opts.additional_secret_outputs,
        aliases=opts.aliases,
        customTimeouts=timeouts,
        parent=record.parent or "",
    )


def _provider(record: ResourceRecord, config: StackConfig, by_urn: Mapping[str, ResourceRecord]) -> Any:
    """The explicit provider's registration, or the default provider the engine would create."""
    if not record.custom or record.is_provider:
        return None
    if record.provider:
        provider = by_urn.get(record.provider.rsplit("::", 1)[0])
        if provider is not None:
            return analyzer_pb2.AnalyzerProviderResource(
                type=provider.type, properties=_properties(provider), urn=provider.urn, name=provider.name
            )
    package = record.package
    name = f"default_{record.version.replace('.', '_')}" if record.version else "default"
    inputs: dict[str, Any] = {"version": record.version} if record.version else {}
    for key, value in config.namespace(package).items():
        secret = f"{package}:{key}" in config.secret_keys
        inputs[key] = {SIG_KEY: SECRET_SIG, "value": value} if secret else value
    return analyzer_pb2.AnalyzerProviderResource(
        type=f"pulumi:providers:{package}",
        properties=dict_to_struct(inputs),
        urn=f"urn:pulumi:{config.stack}::{config.project}::pulumi:providers:{package}::{name}",
        name=name,
    )


def analyze_request(
    record: ResourceRecord, config: StackConfig, by_urn: Mapping[str, ResourceRecord]
) -> analyzer_pb2.AnalyzeRequest:
    """One registration as the engine sends it to an analyzer; `by_urn`: the registrations so far (its explicit
    provider is registered before it), so a request can be sent while the program still runs (policy.py)."""
    return analyzer_pb2.AnalyzeRequest(**_common(record, config, by_urn))


def _common(record: ResourceRecord, config: StackConfig, by_urn: Mapping[str, ResourceRecord]) -> dict[str, Any]:
    return dict(
        type=record.type,
        properties=_properties(record),
        urn=record.urn,
        name=record.name,
        options=_options(record),
        provider=_provider(record, config, by_urn),
    )


def analyze_requests(capture: Capture) -> tuple[list[analyzer_pb2.AnalyzeRequest], analyzer_pb2.AnalyzeStackRequest]:
    """One AnalyzeRequest per registration (URN order; a read is not analysed) and the AnalyzeStackRequest over all
    of them."""
    by_urn = capture.by_urn()
    return (
        [analyze_request(record, capture.config, by_urn) for record in capture.sorted_resources() if not record.read],
        analyze_stack_request(capture),
    )


def analyze_stack_request(capture: Capture) -> analyzer_pb2.AnalyzeStackRequest:
    """The AnalyzeStackRequest over every registration of a finished run (URN order)."""
    by_urn = capture.by_urn()
    stack_resources = [
        analyzer_pb2.AnalyzerResource(
            **_common(record, capture.config, by_urn),
            parent=record.parent or "",
            dependencies=record.dependencies,
            propertyDependencies={
                key: analyzer_pb2.AnalyzerPropertyDependencies(urns=urns)
                for key, urns in record.property_dependencies.items()
                if urns
            },
        )
        for record in capture.sorted_resources()
    ]
    return analyzer_pb2.AnalyzeStackRequest(resources=stack_resources)


# -- policy config, reconciled as the engine does -------------------------------------------------
