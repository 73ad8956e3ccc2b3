"""Every decision of a JetStream deployment, made once before any resource: `plan_jetstream` checks
a JetStreamSpec and sizes the slice; `JetStreamPlan` holds the result and derives the names, paths
and arguments the pod and the converter Job use. Pure: no provider SDK.

Every refusal is one UserError naming the `jetstream.` key. The memory check is the catalogue's
(`sizing.judge`) with JetStream's numbers: weights in the chosen dtype and the KV cache it
pre-allocates, `batch_size x max_cache_length` tokens (`max_input_length + max_output_length` in
the download flow). A cache that does not fit is blamed on the batch and cache settings; weights
that do not fit, on the topology.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from tpu_stacks.catalog.engine_models import check_context
from tpu_stacks.catalog.models import ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import SliceShape, all_slice_shapes, generation, parse_topology, slice_shape
from tpu_stacks.cluster.capacity import is_fallback
from tpu_stacks.cluster.jobs_pool import JobRequest, require_jobs_pool
from tpu_stacks.cluster.plan import (
    ClusterPlan,
    WorkloadPlan,
    plan_workload_cluster,
    refuse_given_slices,
    require_addons,
)
from tpu_stacks.cluster.spec import Autoscaling, ClusterSpec, SliceSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.images import check_pinned
from tpu_stacks.jetstream.engine import JETSTREAM, JETSTREAM_METRICS_FLAG
from tpu_stacks.jetstream.models import JetStreamModel, jetstream_model
from tpu_stacks.jetstream.spec import (
    COMPILE_CACHE_DIR,
    CONVERTER_IMAGE,
    FLOW_BATCH,
    FLOW_IMAGES,
    HEALTHCHECK_SINCE,
    METRICS_PORT,
    MODELS_DIR,
    WEIGHTS_DIR,
    JetStreamSpec,
)
from tpu_stacks.names import is_region
from tpu_stacks.sizing import Candidate, ServingRequest, breakdown, gib, heads_not_divided, judge, size
from tpu_stacks.slo.plan import EngineSettings, SloPrediction, slo_replicas

POOL = "tpu-nodepool"  # the tutorial's node pool name ([D-GKE-JETSTREAM])
SLICE_KEYS = {
    "zone": "jetstream.zone",
    "spot": "jetstream.spot",
    "reservation": "jetstream.reservation",
    "nodes": "jetstream.replicas",
    "autoscaling": "jetstream.replicas",
    "capacity": "jetstream.capacity",
    "count": "jetstream.replicas",
}
"""The derived slice's fields, as the user spells them in the jetstream section."""


class JetStreamPlan(WorkloadPlan):
    """Everything decided for one JetStream deployment: one TPU pool, up to one node per server replica, none before
    the servers ask (on Standard the converter runs on the cluster's jobs pool, a CPU node that exists only while it
    runs)."""

    spec: JetStreamSpec
    names: JetStreamModel
    request: ServingRequest
    server_image: str
    http_image: str
    slo: SloPrediction | None = None
    """The traffic model's prediction for `spec.slo` (`spec.replicas` is already sized from it)."""

    @property
    def converter_flow(self) -> bool:
        return self.spec.flow == "converter"

    @property
    def dtype_dir(self) -> str:
        return "int8" if self.spec.quantize_weights else "bf16"

    @property
    def checkpoint_prefix(self) -> str:
        """Bucket path the converter writes and the server reads (the tutorial's layout)."""
        return f"pytorch/{self.names.checkpoint_dir}/final/{self.dtype_dir}/"

    @property
    def converter_job_name(self) -> str:
        """One per model and dtype, so two conversions can run side by side."""
        return f"checkpoint-converter-{self.names.checkpoint_dir}-{self.dtype_dir}"

    @property
    def health_path(self) -> str:
        """The HTTP sidecar's end-to-end check, or its root on builds older than /healthcheck."""
        match = re.search(r":v(\d+)\.(\d+)\.(\d+)$", self.http_image)
        if match and tuple(int(part) for part in match.groups()) < HEALTHCHECK_SINCE:
            return "/"
        return "/healthcheck"

    @property
    def compile_cache_prefix(self) -> str:
        """Keyed by model, slice and server build: JAX keys entries itself, this keeps them apart."""
        model_slug = re.sub(r"[^a-z0-9.-]+", "-", self.model.id.lower()).strip("-")
        build = re.sub(r"[^A-Za-z0-9.-]+", "-", self.server_image.rsplit(":", 1)[-1])[:16]
        return f"jax-cache/{model_slug}/{self.shape.generation}-{self.shape.topology}/{build}"

    def server_args(self) -> list[str]:
        spec = self.spec
        if self.converter_flow:  # the tutorial's eight arguments, in its order ([K-JETSTREAM-CONV])
            directory = f"{MODELS_DIR}/{self.checkpoint_prefix}"
            return [
                f"--size={self.names.size}",
                f"--model_name={self.names.model_name}",
                f"--batch_size={self.request.batch}",
                f"--max_cache_length={spec.max_cache_length}",
                f"--quantize_weights={spec.quantize_weights}",
                f"--quantize_kv_cache={spec.quantize_kv_cache}",
                f"--tokenizer_path={directory}tokenizer.model",
                f"--checkpoint_path={directory}model.safetensors",
                # v0.2.3's run_server starts JetStream's Prometheus server only with this flag (engine.py)
                *([f"{JETSTREAM_METRICS_FLAG}={METRICS_PORT}"] if spec.monitoring.enabled else []),
            ]
        args = [  # `jpt serve` ([K-JETSTREAM])
            f"--model_id={self.names.hf_id}",
            f"--override_batch_size={self.request.batch}",
            "--enable_model_warmup=True",
            f"--max_input_length={spec.max_input_length}",
            f"--max_output_length={spec.max_output_length}",
            f"--working_dir={WEIGHTS_DIR}",
        ]
        if spec.quantize_weights:
            args.append("--quantize_weights=True")
        if spec.quantize_kv_cache:
            args.append("--quantize_kv_cache=True")
        if spec.compile_cache:
            args.append(f"--internal_jax_compilation_cache={COMPILE_CACHE_DIR}")
        return args

    def converter_args(self, bucket: str) -> list[str]:
        """The converter's `-x=value` arguments (its getopts parser takes the text after `=`, [CONVERTER])."""
        return [
            "-s=jetstream-pytorch",
            f"-m={self.names.converter_repo}",
            f"-o=gs://{bucket}/{self.checkpoint_prefix}",
            f"-n={self.names.model_name}",
            f"-q={self.spec.quantize_weights}",
            "-h=True",
        ]


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


def _context_key(spec: JetStreamSpec) -> str:
    """The setting that makes the KV cache's length: one key in the converter flow, two added in the download flow."""
    return "jetstream.maxCacheLength" if spec.flow == "converter" else "jetstream.maxInputLength + maxOutputLength"


def _context_fix(spec: JetStreamSpec, model: ResolvedModel) -> str | None:
    if spec.flow == "converter":
        return None
    return f"make maxInputLength + maxOutputLength at most {model.architecture.max_context}"


def _verdict(spec: JetStreamSpec, request: ServingRequest) -> Candidate:
    """The slice: the one named (checked to hold weights and cache), or the smallest single-host fit."""
    gen = generation(spec.tpu_generation, key="jetstream.tpuGeneration")
    served = JETSTREAM[-1].served_generations or ()  # every pinned version serves the same (engine.py)
    if not JETSTREAM[-1].serves_generation(gen.name):
        raise UserError(
            "jetstream.tpuGeneration",
            spec.tpu_generation,
            "is not served by the pinned JetStream-PyTorch images (v0.2.x, 2024; upstream archived 1 Feb 2026), "
            f"which serve TPU {', '.join(served)}",
            f"use tpuGeneration: {served[0]}, or serve on {gen.name} with VllmStack (tpu-stacks:vllm)",
        )
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
        derived = (
            f"chose {verdict.shape.topology}, the largest single-host slice, which " if spec.topology == "auto" else ""
        )
        raise UserError(
            "jetstream.topology",
            spec.topology,  # as written: `auto` is the user's, the slice it chose is not
            f"{derived}cannot hold {request.model.id}: weights and runtime alone need {gib(fixed)}, "
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


def _check_heads(model: ResolvedModel, shape: SliceShape) -> None:
    """The tensor-parallel rule every engine shares (sizing.heads_not_divided)."""
    if reason := heads_not_divided(model, shape):
        raise UserError(
            "jetstream.topology", shape.topology, reason, "choose a topology whose device count divides the head count"
        )


def _check_zone(spec: JetStreamSpec, cluster: ClusterSpec, shape: SliceShape) -> None:
    """A regional Standard cluster spans zones; a TPU pool lives in exactly one."""
    if (
        cluster.mode == "standard"
        and is_region(cluster.location)
        and not spec.zone
        and len(cluster.node_locations) != 1
    ):
        raise UserError(
            "jetstream.zone",
            MISSING,
            f"is required: cluster {cluster.location} is regional",
            f"name the TPU pool's zone, e.g. {cluster.location}-a (a zone that offers TPU {shape.generation})",
        )


def _plan_cluster(spec: JetStreamSpec, cluster: ClusterSpec, shape: SliceShape) -> ClusterPlan:
    """The user's cluster plus one TPU pool: the sized single-host slice, up to one node per server replica and none
    before the Deployment's pods ask (`_autoscaling`); in the converter flow also the jobs pool its Job runs on."""
    refuse_given_slices(cluster, "jetstream.model")  # before the zone check, which would not name them
    _check_zone(spec, cluster, shape)
    pool = SliceSpec(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        name=POOL,
        autoscaling=_autoscaling(spec),
        zone=spec.zone,
        spot=spec.spot,
        reservation=spec.reservation,
        capacity=spec.capacity,
    )
    if spec.flow == "converter":  # the server reads the converted checkpoint through GCS FUSE
        cluster = require_addons(cluster, "JetStreamStack", "gcs_fuse")
    cluster = _jobs_pool(spec, cluster)
    return plan_workload_cluster(cluster, pool, SLICE_KEYS, "jetstream.model")


def _autoscaling(spec: JetStreamSpec) -> Autoscaling | None:
    """0..replicas, in both flows: no TPU node exists (and bills) before the Deployment's pods ask for one, and the
    Deployment is declared after the converter Job (jetstream/component.py), so the slices are not idle while the
    checkpoint is downloaded and converted; GKE's cluster autoscaler adds a node per pending replica (ledger:
    gke.autoscaler.scale-from-zero), and `pulumi up`'s wait for the Deployment includes that node's provisioning
    (awaits.py `pod_budget`). A capacity fallback's pools are created and sized by GKE from the pending pods."""
    if is_fallback(spec.capacity):
        return None
    return Autoscaling(min_nodes=0, max_nodes=spec.replicas)


CONVERTER_JOB = "the converter Job"


def _jobs_pool(spec: JetStreamSpec, cluster: ClusterSpec) -> ClusterSpec:
    """The converter flow's jobs pool, sized for the converter's requests (cluster/jobs_pool.py): on a Standard
    cluster whose pools this stack creates, unless `converter.nodeSelector` runs it on nodes of the user's. A
    `cluster.jobsPool` nothing would run on is refused, not created."""
    converter = spec.converter
    if spec.flow == "converter" and converter.node_selector is None:
        request = JobRequest(
            job=CONVERTER_JOB,
            cpu=converter.cpu,
            memory=converter.memory,
            cpu_key="jetstream.converter.cpu",
            memory_key="jetstream.converter.memory",
        )
        return require_jobs_pool(cluster, request)
    if cluster.jobs_pool is not None:
        why = (
            "holds only the converter Job, which flow download has not"
            if spec.flow == "download"
            else "would hold nothing: jetstream.converter.nodeSelector runs the converter on your nodes"
        )
        raise UserError("cluster.jobsPool", "<set>", why, "remove it")
    return cluster


def plan_jetstream(spec: JetStreamSpec, cluster: ClusterSpec, hf_token_given: bool) -> JetStreamPlan:
    """Check every setting and size the slice; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="jetstream.model")
    names = jetstream_model(model, needs_converter=spec.flow == "converter")
    _check_flow_keys(spec)
    server_image, http_image = FLOW_IMAGES[spec.flow]
    server_image, http_image = spec.server_image or server_image, spec.http_image or http_image
    defaults = (*FLOW_IMAGES[spec.flow], CONVERTER_IMAGE)
    images = (("serverImage", server_image), ("httpImage", http_image), ("converter.image", spec.converter.image))
    for (key, image), example in zip(images, defaults, strict=True):
        check_pinned(image, f"jetstream.{key}", example)
    request = _request(spec, model)
    check_context(model.architecture, request.context, _context_key(spec), _context_fix(spec, model))
    verdict = _verdict(spec, request)
    _check_heads(model, verdict.shape)
    spec, slo = _with_slo(spec, request, verdict.shape)
    cluster_plan = _plan_cluster(spec, cluster, verdict.shape)
    model.require_token(hf_token_given)  # last: a missing token must not hide a setting that is wrong
    return JetStreamPlan(
        spec=spec,
        model=model,
        names=names,
        request=request,
        verdict=verdict,
        server_image=server_image,
        http_image=http_image,
        cluster=cluster_plan,
        slo=slo,
    )


def _with_slo(
    spec: JetStreamSpec, request: ServingRequest, shape: SliceShape
) -> tuple[JetStreamSpec, SloPrediction | None]:
    """The spec with `replicas` sized for `slo` (slo/plan.py's rule: a fixed count is its own maximum)."""
    if spec.slo is None:
        return spec, None
    prediction, _, replicas = slo_replicas(
        "jetstream",
        spec.slo,
        request,
        shape,
        EngineSettings.of(request, "jetstream", request.batch),
        replicas_key="jetstream.replicas",
        minimum=1,
        maximum=spec.replicas if "replicas" in spec.model_fields_set else None,
    )
    return spec.model_copy(update={"replicas": replicas}), prediction
