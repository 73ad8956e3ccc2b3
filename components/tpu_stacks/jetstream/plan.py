"""`plan_jetstream`: check a JetStreamSpec and decide the slice, before any resource is declared.

Every refusal is one UserError naming the `jetstream.` key. The memory check is the catalogue's
(`sizing.judge`) with JetStream's numbers: weights in the chosen dtype and the KV cache it
pre-allocates, `batch_size x max_cache_length` tokens (`max_input_length + max_output_length` in
the download flow). A cache that does not fit is blamed on the batch and cache settings; weights
that do not fit, on the topology.
"""

from __future__ import annotations

from pydantic import BaseModel

from tpu_stacks.catalog.models import ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import all_slice_shapes, generation, parse_topology, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.images import check_pinned
from tpu_stacks.jetstream.models import jetstream_model
from tpu_stacks.jetstream.spec import CONVERTER_IMAGE, FLOW_BATCH, FLOW_IMAGES, JetStreamPlan, JetStreamSpec
from tpu_stacks.names import K8S_NAME, SERVICE_ACCOUNT_ID
from tpu_stacks.sizing import Candidate, ServingRequest, breakdown, gib, judge, size

# Settings of the other flow would be silently ignored: they are refused instead.
_OTHER_FLOW = {
    "converter": {
        "max_input_length": "the converter flow's KV cache is maxCacheLength: remove it, or set flow: download",
        "max_output_length": "the converter flow's KV cache is maxCacheLength: remove it, or set flow: download",
    },
    "download": {
        "max_cache_length": "the download flow's KV cache is maxInputLength + maxOutputLength: remove it",
        "converter": "the download flow has no converter Job: remove it, or set flow: converter",
    },
}


def _check_flow_keys(spec: JetStreamSpec) -> None:
    for field, fix in _OTHER_FLOW[spec.flow].items():
        if field in spec.model_fields_set:
            other = "download" if spec.flow == "converter" else "converter"
            value = getattr(spec, field)
            shown = "<set>" if isinstance(value, BaseModel) else value
            raise UserError(
                f"jetstream.{JetStreamSpec.model_fields[field].alias or field}",
                shown,
                f"applies only to flow {other}",
                fix,
            )


def _request(spec: JetStreamSpec, model: ResolvedModel) -> ServingRequest:
    converter = spec.flow == "converter"
    context = spec.max_cache_length if converter else spec.max_input_length + spec.max_output_length
    return ServingRequest(
        model=model,
        engine="jetstream",
        context=context,
        batch=spec.batch_size or FLOW_BATCH[spec.flow],
        weight_dtype="int8" if spec.quantize_weights else "bf16",
        kv_dtype="int8" if spec.quantize_kv_cache else "bf16",
        prefill_tokens=context if converter else spec.max_input_length,
    )


def _verdict(spec: JetStreamSpec, request: ServingRequest) -> Candidate:
    """The slice: the one named (checked to hold weights and cache), or the smallest single-host fit."""
    gen = generation(spec.tpu_generation, key="jetstream.tpuGeneration")
    if spec.topology == "auto":
        single = [c for c in size(request, gen).candidates if not c.shape.multi_host]
        fitting = [c for c in single if c.fits]
        if fitting:
            return fitting[0]
        verdict = single[-1]
    else:
        try:
            verdict = judge(request, slice_shape(gen, spec.topology))
        except UserError as error:
            raise error.under("jetstream") from None
        if verdict.shape.multi_host:
            single = sorted(
                {s.topology for s in all_slice_shapes(gen) if not s.multi_host}, key=lambda t: parse_topology(t).chips
            )
            raise UserError(
                "jetstream.topology",
                spec.topology,
                f"is a multi-host slice ({verdict.shape.nodes} VMs); JetStream-PyTorch serves from one VM",
                f"use a single-host {gen.name} topology: {', '.join(single)}",
            )
    if verdict.fits:
        return verdict
    fixed = verdict.memory.total_bytes - verdict.memory.part("kv_cache")
    if fixed > verdict.usable_bytes:  # not even the weights: the slice is the problem, not the cache
        raise UserError(
            "jetstream.topology",
            verdict.shape.topology,
            f"cannot hold {request.model.id}: weights and runtime alone need {gib(fixed)}, "
            f"{verdict.shape.generation} {verdict.shape.topology} has {gib(verdict.usable_bytes)} usable",
            "choose a larger single-host topology (or auto), set quantizeWeights: true, or a generation with more HBM",
        )
    raise UserError(
        "jetstream.batchSize",
        f"{request.batch} x {request.context} tokens",
        f"is the KV cache JetStream pre-allocates: {gib(verdict.memory.total_bytes)} "
        f"({breakdown(verdict.memory)}) on {verdict.shape.generation} {verdict.shape.topology}, "
        f"which has {gib(verdict.usable_bytes)} usable",
        "lower batchSize or the cache length, set quantizeKvCache: true, or choose a larger single-host topology",
    )


def _check_names(spec: JetStreamSpec) -> None:
    """WorkloadIdentity's own naming rules, checked here so nothing is declared before a refusal."""
    for field, pattern, rule in (
        ("namespace", K8S_NAME, "lowercase letters, digits and '-'"),
        ("ksa_name", K8S_NAME, "lowercase letters, digits and '-'"),
        ("gsa_name", SERVICE_ACCOUNT_ID, "6-30 lowercase letters, digits and '-', starting with a letter"),
    ):
        value = getattr(spec, field)
        if not pattern.matches(value):
            key = JetStreamSpec.model_fields[field].alias or field
            raise UserError(f"jetstream.{key}", value, "is not a valid name", f"use {rule}")


def plan_jetstream(spec: JetStreamSpec, hf_token_given: bool) -> JetStreamPlan:
    """Check every setting and size the slice; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="jetstream.model")
    names = jetstream_model(model, needs_converter=spec.flow == "converter")
    _check_flow_keys(spec)
    _check_names(spec)
    if model.architecture.gated and not hf_token_given:
        raise UserError(
            "hfToken",
            "<missing>",
            f"is required: {model.id} is gated on Hugging Face",
            "set it as a secret: pulumi config set --secret tpu-stacks:hfToken hf_...",
        )
    server_image, http_image = FLOW_IMAGES[spec.flow]
    server_image, http_image = spec.server_image or server_image, spec.http_image or http_image
    defaults = (*FLOW_IMAGES[spec.flow], CONVERTER_IMAGE)
    images = (("serverImage", server_image), ("httpImage", http_image), ("converter.image", spec.converter.image))
    for (key, image), example in zip(images, defaults, strict=True):
        check_pinned(image, f"jetstream.{key}", example)
    request = _request(spec, model)
    verdict = _verdict(spec, request)
    heads = model.architecture.attention.query_heads if model.architecture.attention else None
    if heads and heads % verdict.shape.chips:
        raise UserError(
            "jetstream.topology",
            verdict.shape.topology,
            f"shards over {verdict.shape.chips} chips, which does not divide {model.id}'s {heads} attention heads",
            "choose a topology whose chip count divides the head count",
        )
    return JetStreamPlan(
        spec=spec,
        model=model,
        names=names,
        request=request,
        verdict=verdict,
        server_image=server_image,
        http_image=http_image,
    )
