"""Every decision of an SGLang-JAX deployment, made once before any resource: the single-host slice for the model,
the cluster that holds it, `--tp-size`, the image and the server's flags. The component only turns this plan into
resources. Pure: no provider SDK.

The flags, read in the pinned wheel: ledger: sglang.flag.host, sglang.flag.port, sglang.flag.model-path,
sglang.flag.tp-size, sglang.flag.context-length, sglang.flag.mem-fraction-static, sglang.flag.download-dir,
sglang.flag.max-running-requests, sglang.flag.disable-radix-cache.
"""

from __future__ import annotations

import re

from tpu_stacks.catalog.engine_models import check_architecture
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.cluster.capacity import is_fallback
from tpu_stacks.cluster.plan import ClusterPlan, WorkloadPlan, plan_workload_cluster, require_addons
from tpu_stacks.cluster.spec import Autoscaling, ClusterSpec, SliceSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.cloud_build import submit_command
from tpu_stacks.images import PYTHON_IMAGE, check_pinned
from tpu_stacks.names import REPOSITORY_ID, builder_account_id
from tpu_stacks.serving.engine_flags import (
    Written,
    check_extra_args_form,
    check_written_flags,
    extra_args_dtypes,
    extra_args_number,
    spelled_out,
)
from tpu_stacks.serving.exposure import check_source_ranges, require_clients
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.sglang.spec import IMAGE_DIR, IMAGE_NAME, PORT, SglangSpec
from tpu_stacks.sizing import (
    ServingRequest,
    choose_slice,
    file_cache_gib,
    heads_not_divided,
    slice_refusal,
)

POOL = "sglang-pool"
REPOSITORY = "sglang-jax"
"""The Artifact Registry repository id's prefix; the stack's cluster name follows it (one per stack)."""
SLICE_KEYS = {
    "spot": "sglang.spot",
    "reservation": "sglang.reservation",
    "autoscaling": "sglang.replicas",
    "count": "sglang.replicas",
    "capacity": "sglang.capacity",
}
"""The derived slice's fields, as the user spells them in the sglang section."""
TP_FLAG = SGLANG.flag("tensor_parallel")
PREFILL_TOKENS = int(SGLANG.flag("prefill_tokens").default)
"""SGLang-JAX's own `--chunked-prefill-size` (the stack does not set it)."""
UNGUARDED = "the stack sets no API key (SGLang-JAX's --api-key guards every route but /health and /metrics)"


class SglangPlan(WorkloadPlan):
    """Everything decided for one SGLang-JAX deployment: a Deployment of fixed size on a single-host slice."""

    spec: SglangSpec
    request: ServingRequest
    cache_gib: int
    """The GCS FUSE file cache of the weights mount, GiB."""
    repository: str
    """The Artifact Registry repository the server image is built into (`sglang-jax-<cluster>`)."""

    @property
    def builds_image(self) -> bool:
        """The stack runs the image it asks the user to build into its registry (no `sglang.image` given)."""
        return self.spec.image is None

    def image_path(self) -> str:
        """The image's name and tag inside the repository."""
        return IMAGE_NAME

    @property
    def builder_account(self) -> str:
        """The id of the service account the build runs as (gcp/image_build.py says why one of our own)."""
        return builder_account_id(self.repository, "sglang.image")

    def build_command(self, image: str, account: str, bucket: str) -> str:
        """The Cloud Build command that builds `image` (the registry's full reference) from the pinned wheel, in the
        stack's project and region, as the builder `account` (projects/P/serviceAccounts/E), the source staged in
        `bucket`, which the builder may read (gcp/cloud_build.py); run from the repository root."""
        values = {"_IMAGE": image, "_SGLANG_JAX_VERSION": SGLANG.version, "_PYTHON_IMAGE": PYTHON_IMAGE}
        return submit_command(IMAGE_DIR, values, self.cluster.spec.project, self.cluster.region, account, bucket)

    def engine_args(self) -> list[str]:
        """The server's flags; a tensor-parallel flag in extraArgs (checked equal to the slice's) replaces ours."""
        spec = self.spec
        given = _tensor_parallel_given(spelled_out(spec.extra_args, SGLANG))
        flag = {name: f"{name}={value.value}" for name, value in written_flags(spec, self.model.id).items()}
        return [
            flag["--host"],
            flag["--port"],
            flag["--model-path"],
            *([] if given is not None else [f"{TP_FLAG.name}={self.tensor_parallel_size}"]),
            flag["--context-length"],
            flag["--mem-fraction-static"],
            flag["--download-dir"],
            *([flag["--max-running-requests"]] if spec.max_running_requests else []),
            *([] if spec.radix_cache else ["--disable-radix-cache"]),
            *spec.extra_args,
        ]


def written_flags(spec: SglangSpec, model_id: str) -> dict[str, Written]:
    """The flags the server is given from the stack's keys or its own values (`engine_args`); extraArgs may repeat
    one only with the same value (`check_written_flags`): the slice and its memory are sized from the keys.
    `--max-running-requests` and `--disable-radix-cache` belong to their keys whether or not they set them."""
    return {
        "--host": Written(None, "0.0.0.0", "the server answers on its pod's address"),
        "--port": Written(None, str(PORT), "the probes, the Service and the network policy use it"),
        "--model-path": Written("sglang.model", model_id),
        "--context-length": Written("sglang.contextLength", str(spec.context_length)),
        "--mem-fraction-static": Written("sglang.memFractionStatic", f"{spec.mem_fraction_static:g}"),
        "--download-dir": Written("sglang.downloadDir", spec.download_dir),
        "--max-running-requests": Written(
            "sglang.maxRunningRequests", str(spec.max_running_requests) if spec.max_running_requests else None
        ),
        "--disable-radix-cache": Written("sglang.radixCache", "false" if spec.radix_cache else "true", switch=True),
    }


def _tensor_parallel_given(extra_args: list[str]) -> tuple[int, str] | None:
    """(index, value) of the last tensor-parallel flag in extraArgs (`--tp-size N`, `--tensor-parallel-size=N`)."""
    names = "|".join(re.escape(n) for n in (TP_FLAG.name, *TP_FLAG.aliases))
    found = None
    for index, arg in enumerate(extra_args):
        for match in re.finditer(rf"(?:{names})(?:=|\s+)(\S+)", arg):
            found = (index, match.group(1))
        if arg in (TP_FLAG.name, *TP_FLAG.aliases) and index + 1 < len(extra_args):
            found = (index, extra_args[index + 1])
    return found


def _check_tensor_parallel(spec: SglangSpec, devices: int, slice_name: str) -> None:
    given = _tensor_parallel_given(spelled_out(spec.extra_args, SGLANG))  # `--tp=2` is `--tp-size` to argparse
    if given is not None and given[1] != str(devices):
        raise UserError(
            f"sglang.extraArgs[{given[0]}]",
            spec.extra_args[given[0]],
            f"sets tensor parallelism {given[1]}, but the {slice_name} slice the model is sized for has {devices} "
            "devices (SGLang-JAX shards the model over every one)",
            f"write {TP_FLAG.name}={devices}, or leave it out (the stack sets it)",
        )


def _check_generation(spec: SglangSpec) -> None:
    gen = generation(spec.tpu_generation, key="sglang.tpuGeneration")
    if not SGLANG.serves_generation(gen.name):
        served = ", ".join(SGLANG.served_generations or ())
        raise UserError(
            "sglang.tpuGeneration",
            spec.tpu_generation,
            f"is not a generation the pinned SGLang-JAX {SGLANG.version} is known to serve ({served})",
            f"use tpuGeneration: {(SGLANG.served_generations or ('v6e',))[0]}, or serve on {gen.name} with VllmStack",
        )


def plan_sglang(spec: SglangSpec, cluster: ClusterSpec, hf_token_given: bool) -> SglangPlan:
    """Size the slice and check every setting; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="sglang.model")
    check_architecture("sglang", model.architecture, "sglang.model", spec.model)
    _check_generation(spec)
    if spec.image is not None:
        check_pinned(spec.image, "sglang.image", f"lmsysorg/sglang-jax:v{SGLANG.version}")
    check_source_ranges("sglang", spec.exposure, spec.source_ranges, "serving the OpenAI API")
    require_clients("sglang", spec.exposure, spec.source_ranges, "serving the OpenAI API", UNGUARDED)
    # Paged KV: one sequence of the context is the floor (batch 1); one prefill chunk sizes the activations.
    # Weights and KV in the dtypes the server holds them in: extraArgs' `--dtype`, `--quantization`,
    # `--kv-cache-dtype`, else `auto` (an fp32 checkpoint stays fp32), by its rule, the one the policy pack reads.
    check_extra_args_form("sglang", spec.extra_args)
    check_written_flags("sglang", spec.extra_args, SGLANG, written_flags(spec, model.id))
    chunk = extra_args_number("sglang", spec.extra_args, SGLANG, "prefill_tokens")
    dtypes = extra_args_dtypes("sglang", spec.extra_args, SGLANG, model.architecture)
    request = ServingRequest(
        model=model,
        engine="sglang",
        context=spec.context_length,
        batch=1,
        # 0 or less turns chunked prefill off: a prompt is prefilled whole (ledger: sglang.chunked-prefill.disabled)
        prefill_tokens=PREFILL_TOKENS if chunk is None else chunk if chunk > 0 else spec.context_length,
        weight_dtype=dtypes.weight,
        kv_dtype=dtypes.kv,
    )
    verdict = choose_slice(request, generation(spec.tpu_generation), spec.topology, "sglang")
    shape = verdict.shape
    if shape.multi_host:
        raise slice_refusal(
            "sglang",
            spec.topology,
            spec.model,
            shape,
            f"spans {shape.nodes} hosts; this stack serves SGLang-JAX from one host",
            "choose a smaller model, a shorter contextLength, or a single-host topology",
        )
    if reason := heads_not_divided(model, shape):
        raise slice_refusal(
            "sglang", spec.topology, spec.model, shape, reason, "set sglang.topology to one whose devices divide them"
        )
    _check_tensor_parallel(spec, shape.jax_devices, f"{shape.generation} {shape.topology}")
    cluster_plan = _plan_cluster(spec, cluster, verdict.shape)
    model.require_token(hf_token_given)  # last: a missing token must not hide any other refusal
    return SglangPlan(
        spec=spec,
        model=model,
        request=request,
        verdict=verdict,
        cache_gib=file_cache_gib(verdict.memory.part("weights")),
        cluster=cluster_plan,
        repository=REPOSITORY_ID.check("sglang.image", f"{REPOSITORY}-{cluster_plan.spec.name}"),
    )


def _plan_cluster(spec: SglangSpec, cluster: ClusterSpec, shape: SliceShape) -> ClusterPlan:
    """The user's cluster plus one TPU pool of single-host nodes, one per replica (a fixed count); a capacity
    fallback's pools are created and sized by GKE from the pending replicas."""
    replicas = spec.replicas
    pool = SliceSpec(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        name=POOL,
        count=1,
        autoscaling=None if is_fallback(spec.capacity) else Autoscaling(min_nodes=replicas, max_nodes=replicas),
        spot=spec.spot,
        reservation=spec.reservation,
        capacity=spec.capacity,
    )
    cluster = require_addons(cluster, "SglangStack", "gcs_fuse")
    return plan_workload_cluster(cluster, pool, SLICE_KEYS, "sglang.model")
