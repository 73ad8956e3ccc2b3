"""Every decision of a vLLM deployment, made once before any resource: the slice for the model,
the cluster that holds it, `--tensor-parallel-size`, the pool's autoscaling, the file-cache size and
the compile-cache key. Components only turn this plan into resources. Pure: no provider SDK.
"""

from __future__ import annotations

import re

from tpu_stacks.catalog.engine_models import check_context, check_vllm_architecture
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.catalog.upstream import text
from tpu_stacks.cluster.capacity import is_fallback
from tpu_stacks.cluster.plan import (
    ClusterPlan,
    WorkloadPlan,
    plan_workload_cluster,
    require_addons,
    require_ray_operator,
)
from tpu_stacks.cluster.spec import Autoscaling, ClusterSpec, SliceSpec, SystemPoolSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.images import check_pinned
from tpu_stacks.names import REPOSITORY_ID, builder_account_id
from tpu_stacks.serving.engine_flags import (
    Written,
    check_extra_args_form,
    check_written_flags,
    extra_args_dtypes,
    given_flags,
    spelled_out,
)
from tpu_stacks.serving.exposure import check_source_ranges, require_clients
from tpu_stacks.serving.parallel_flags import (
    PIPELINE_PARALLEL,
    TensorParallelFlag,
    check_parallelism,
    tensor_parallel_flags,
)
from tpu_stacks.serving.speculative import async_scheduling as vllm_async_scheduling
from tpu_stacks.sizing import (
    Parallelism,
    ServingRequest,
    choose_slice,
    file_cache_gib,
    heads_not_divided,
    serving_parallelism,
    slice_refusal,
    tensor_parallel_size,
)
from tpu_stacks.slo.plan import (
    EngineSettings,
    SloPrediction,
    latency_batch,
    slo_replicas,
    slo_shape,
    waiting_target,
)
from tpu_stacks.vllm.gateway_plan import GatewayPlan, check_gateway, check_single_host, plan_gateway
from tpu_stacks.vllm.kv_events import server_args
from tpu_stacks.vllm.multihost_plan import SERVE_IMAGE_DIR, check_multihost, image_build_command
from tpu_stacks.vllm.spec import PORT, VLLM_IMAGE, VllmSpec

CONFIG_FLAG = text("vllm.args.config-file")
"""vLLM's settings-file flag (ledger: vllm.args.config-file)."""

POOL = "vllm-pool"
MULTI_HOST_SYSTEM_POOL = SystemPoolSpec(machine_type="n2-standard-16", nodes=1)
"""The CPU pool of a multi-host stack, when cluster.systemPool is not given: the default e2-standard-4 (about
3.9 allocatable vCPUs) holds neither the Ray head (4 CPUs, 16Gi, plus its GCS FUSE sidecar) nor the weights
download Job, and a Standard cluster without ComputeClasses provisions no other CPU node; 16 vCPUs and 64 GB
hold both with kube-system's pods (the Ray Train stack's own choice is alike: raytrain/plan.py SYSTEM_POOL)."""
REPOSITORY = "vllm-tpu"
"""The default Artifact Registry repository id's prefix; the stack's cluster name follows it."""
SLICE_KEYS = {
    "spot": "vllm.spot",
    "reservation": "vllm.reservation",
    "autoscaling": "vllm.replicas",
    "count": "vllm.replicas",
    "capacity": "vllm.capacity",
}
"""The derived slice's fields, as the user spells them in the vllm section."""


class VllmPlan(WorkloadPlan):
    """Everything decided for one vLLM deployment: a Deployment on a single-host slice (the pool scales with
    the HPA), or a RayService over multi-host slices (`multi_host`, vllm.multihost_plan)."""

    spec: VllmSpec
    request: ServingRequest
    cache_gib: int
    """The GCS FUSE file cache of a single-host server, GiB (0 on multi-host slices: no file cache there)."""
    slo: SloPrediction | None = None
    """The traffic model's prediction for `spec.slo` (the replicas in `spec` are already sized from it)."""
    gateway: GatewayPlan | None = None
    """GKE Inference Gateway in front of the replicas (vllm/gateway_plan.py), when `vllm.gateway.enabled`."""

    @property
    def parallelism(self) -> Parallelism:
        return serving_parallelism(self.shape)

    @property
    def service_exposure(self) -> str:
        """How the server's own Service is exposed, decided here once: behind the gateway it is ClusterIP (the
        Gateway is the load balancer, its clients vllm/gateway_network.py's), else `vllm.exposure`."""
        return "cluster" if self.gateway is not None else self.spec.exposure

    @property
    def multi_host(self) -> bool:
        """The slice decides the object: a RayService when one replica spans several TPU hosts."""
        return self.parallelism.multi_host

    @property
    def builds_image(self) -> bool:
        """The stack prints the build of the Ray Serve image it runs (multi-host, into its own registry: mode
        standard); on one host, or with an image the user brings, there is nothing to build."""
        return self.multi_host and self.spec.registry.mode == "standard"

    @property
    def builder_account(self) -> str:
        """The id of the service account the build runs as (gcp/image_build.py says why one of our own)."""
        return builder_account_id(self.spec.registry.repository or "", "vllm.registry.repository")

    def build_command(self, image: str, account: str, bucket: str) -> str:
        """The Cloud Build command that builds the Ray Serve `image` (the registry's full reference) in the stack's
        project and region, as the builder `account`, its source staged in `bucket` (gcp/cloud_build.py)."""
        return image_build_command(
            image, self.spec.image, self.cluster.spec.project, self.cluster.region, account, bucket
        )

    @property
    def autoscales(self) -> bool:
        """An HPA (and the metrics adapter it needs) only when the replica count may change; on multi-host
        slices Ray Serve and KubeRay's autoscaler scale in whole slices instead (no HPA)."""
        return not self.multi_host and self.spec.replicas.min < self.spec.replicas.max

    @property
    def compile_cache_prefix(self) -> str:
        """Keyed by model, slice, tensor parallelism and vLLM build: a cache is only valid for all four.

        The build is the image's tag, up to 40 characters: a full commit id, or the multi-host server
        image's `serve-ray<ray>-vllm<vllm>` (Pulumi.vllm-405b.yaml), whose vLLM part a shorter cut lost."""
        model_slug = re.sub(r"[^a-z0-9.-]+", "-", self.model.id.lower()).strip("-")
        image = self.spec.registry.image if self.spec.registry.mode == "standard" else self.spec.image
        build = re.sub(r"[^A-Za-z0-9.-]+", "-", (image or "").rsplit(":", 1)[-1])[:40]
        shape = f"{self.shape.generation}-{self.shape.topology}-tp{self.tensor_parallel_size}"
        return f"xla-cache/{model_slug}/{shape}/{build}"

    def engine_args(self) -> list[str]:
        spec = self.spec
        # extraArgs that set it (checked equal to the slice's by plan_vllm) replace ours: one flag, one value.
        # The flags at the pinned vLLM: ledger: vllm.flag.host, vllm.flag.port, vllm.flag.tensor-parallel-size,
        # vllm.flag.max-model-len, vllm.flag.model, vllm.flag.download-dir, vllm.flag.max-num-batched-tokens,
        # vllm.flag.max-num-seqs.
        given = tensor_parallel_flags(" ".join(_spelled_out(spec.extra_args)))
        flag = {name: f"{name}={value.value}" for name, value in written_flags(spec, self.model.id).items()}
        return [
            flag["--host"],
            flag["--port"],
            *([] if given else [f"--tensor-parallel-size={self.tensor_parallel_size}"]),
            flag["--max-model-len"],
            flag["--model"],
            flag["--download-dir"],
            flag["--max-num-batched-tokens"],
            flag["--max-num-seqs"],
            # Behind the gateway's precise prefix cache, the KV events its router indexes (vllm/kv_events.py).
            *(server_args(self.gateway.model) if self.gateway is not None and self.gateway.precise else []),
            *spec.extra_args,
        ]


def written_flags(spec: VllmSpec, model_id: str) -> dict[str, Written]:
    """The flags the server is given from the stack's keys or its own values (`engine_args`); extraArgs may repeat
    one only with the same value (`check_written_flags`): the slice, its memory and its traffic are sized from the
    keys."""
    return {
        "--host": Written(None, "0.0.0.0", "the server answers on its pod's address"),
        "--port": Written(None, str(PORT), "the probes, the Service, the network policy and the metrics scrape use it"),
        "--max-model-len": Written("vllm.maxModelLen", str(spec.max_model_len)),
        "--model": Written("vllm.model", model_id),
        "--download-dir": Written("vllm.downloadDir", spec.download_dir),
        "--max-num-batched-tokens": Written("vllm.maxNumBatchedTokens", str(spec.max_num_batched_tokens)),
        "--max-num-seqs": Written("vllm.maxNumSeqs", str(spec.max_num_seqs)),
    }


def _check_config_file(spec: VllmSpec) -> None:
    """vLLM's `--config FILE` sets flags from a YAML file the plan cannot read (ledger: vllm.args.config-file)."""
    for given in given_flags(spec.extra_args, VLLM, known={CONFIG_FLAG}):
        if given.name == CONFIG_FLAG:
            raise UserError(
                f"vllm.extraArgs[{given.argument}]",
                given.written,
                "names a settings file the plan cannot read, so the slice could not be sized for what it sets",
                "write its settings as flags in extraArgs (or as the section's keys)",
            )


def _check_image(image: str, key: str = "vllm.image") -> None:
    check_pinned(image, key, VLLM_IMAGE)


def _check_registry(spec: VllmSpec) -> None:
    registry = spec.registry
    if registry.mode == "standard":
        if not registry.image:
            raise UserError(
                "vllm.registry.image",
                "<missing>",
                "is required with mode standard",
                f"name the image you push, e.g. vllm-tpu:{VLLM.version} on one host (tpu-inference's "
                f"docker/Dockerfile), or one built from {SERVE_IMAGE_DIR} on a multi-host slice",
            )
        _check_image(registry.image, "vllm.registry.image")
    if registry.mode != "none" and registry.repository is not None:
        REPOSITORY_ID.check("vllm.registry.repository", registry.repository)
    if registry.mode == "remote" and not spec.image.startswith("docker.io/"):
        raise UserError(
            "vllm.image",
            spec.image,
            "is not on Docker Hub, which the remote repository mirrors",
            "use a docker.io/ image or registry mode none",
        )


API_KEY_GAP = (
    "vLLM's API key (apiKey) does not close it: it guards /v1, /v2, /inference and /cohere, while /invocations "
    "serves the same completions without it (vllm-tpu 0.29.0)"
)
"""Why vllm.apiKey alone is no reason to leave an internal load balancer open (ledger: vllm.api-key.guarded-prefixes,
vllm.api-key.invocations-unguarded)."""


def _check_exposure(spec: VllmSpec) -> None:
    check_source_ranges("vllm", spec.exposure, spec.source_ranges, "serving the OpenAI API")


def plan_vllm(spec: VllmSpec, cluster: ClusterSpec, hf_token_given: bool, api_key_given: bool) -> VllmPlan:
    """Size the slice and check every setting; raises UserError before any resource exists."""
    model = lookup_model(
        spec.model, key="vllm.model", model_config=spec.model_config_path, config_key="vllm.modelConfig"
    )
    check_vllm_architecture(model.architecture, "vllm.model", spec.model)
    check_context(model.architecture, spec.max_model_len, "vllm.maxModelLen")
    gen = generation(spec.tpu_generation, key="vllm.tpuGeneration")
    if spec.replicas.min > spec.replicas.max and not _slo_sets_max(spec):
        raise UserError(
            "vllm.replicas", f"{spec.replicas.min}..{spec.replicas.max}", "has min above max", "set min <= max"
        )
    _check_image(spec.image)
    _check_registry(spec)
    _check_exposure(spec)
    cluster = check_gateway(spec, cluster)
    check_extra_args_form("vllm", spec.extra_args)
    check_written_flags("vllm", spec.extra_args, VLLM, written_flags(spec, model.id))
    _check_config_file(spec)
    vllm_async_scheduling(spec.extra_args, VLLM, "vllm")  # a speculative method vLLM refuses it with: refused here
    # The dtypes the server runs with: extraArgs' --dtype, --quantization, --kv-cache-dtype, else `auto`, by vLLM's
    # rule, the one the policy pack reads.
    dtypes = extra_args_dtypes("vllm", spec.extra_args, VLLM, model.architecture)
    request = ServingRequest(
        model=model,
        engine="vllm",
        weight_dtype=dtypes.weight,
        kv_dtype=dtypes.kv,
        context=spec.max_model_len,
        batch=1,
        prefill_tokens=spec.max_num_batched_tokens,
    )
    topology, machine_type = spec.topology, None
    if spec.slo is not None and spec.topology is None:  # the slice `size --tpu` picks for the slo (slo/plan.py)
        picked = slo_shape("vllm", spec.slo, model, gen.name, _engine_settings(spec, request))
        if picked is not None:
            topology, machine_type = picked.topology, picked.machine_type
    verdict = choose_slice(request, gen, topology, "vllm", machine_type)
    check_single_host(spec, verdict.shape)
    if verdict.shape.multi_host:
        check_multihost(spec, verdict.shape)  # the mode is decided here: a RayService over whole slices
    elif not spec.gateway.enabled:  # with the gateway, the Service is ClusterIP and the Gateway the load balancer
        require_clients("vllm", spec.exposure, spec.source_ranges, "serving the OpenAI API", API_KEY_GAP)
    if reason := heads_not_divided(model, verdict.shape):
        raise slice_refusal(
            "vllm",
            spec.topology,
            spec.model,
            verdict.shape,
            reason,
            "set vllm.topology to one whose device count divides the head count",
        )
    _check_parallelism(spec, verdict.shape, tensor_parallel_size(verdict.shape))
    spec, slo = _with_slo(spec, request, verdict.shape)
    check_written_flags("vllm", spec.extra_args, VLLM, written_flags(spec, model.id))  # again: the slo's maxNumSeqs
    weights = verdict.memory.part("weights")
    cluster_plan = _plan_cluster(spec, cluster, verdict.shape)
    # The secrets last: a missing token must not hide that the model does not fit (or any other setting).
    model.require_token(hf_token_given)
    if spec.api_key and not api_key_given:
        raise UserError(
            "api_key_secret",
            MISSING,
            "is required when vllm.apiKey is true",
            "give vLLM's API key as a secret input (api_key_secret, apiKeySecret in other languages)",
        )
    return VllmPlan(
        spec=_with_repository(spec, cluster_plan),
        model=model,
        request=request,
        verdict=verdict,
        # One host: the file cache holds the weights it reads. Across hosts every TPU host reads the whole
        # checkpoint once per start and keeps only its own shards (tpu-inference under TPU_MULTIHOST_BACKEND=ray):
        # no file cache, nothing would be read from it twice (vllm/rayservice.py READ_ONLY_OPTIONS).
        cache_gib=0 if verdict.shape.multi_host else file_cache_gib(weights),
        cluster=cluster_plan,
        slo=slo,
        gateway=plan_gateway(spec, cluster_plan, model.id, model.architecture.gated),
    )


def _engine_settings(spec: VllmSpec, request: ServingRequest) -> EngineSettings:
    """What the slo's slice choice and its prediction both tell the traffic model of vLLM's settings."""
    # None: the build's default; off where a speculative method turns it off (serving/speculative.py)
    async_scheduling = vllm_async_scheduling(spec.extra_args, VLLM, "vllm")
    return EngineSettings.of(request, "vllm", spec.max_num_seqs, spec.max_num_batched_tokens, async_scheduling)


def _slo_sets_max(spec: VllmSpec) -> bool:
    return spec.slo is not None and "max" not in spec.replicas.model_fields_set


def _with_slo(spec: VllmSpec, request: ServingRequest, shape: SliceShape) -> tuple[VllmSpec, SloPrediction | None]:
    """The spec with its replica range sized for `slo` (slo/plan.py's rule), and the prediction; with a latency
    limit also vLLM's own knobs: the batch cap and the HPA's waiting-requests target."""
    if spec.slo is None:
        return spec, None
    prediction, low, high = slo_replicas(
        "vllm",
        spec.slo,
        request,
        shape,
        _engine_settings(spec, request),
        replicas_key="vllm.replicas.max",
        minimum=spec.replicas.min,
        maximum=None if _slo_sets_max(spec) else spec.replicas.max,
    )
    updates: dict[str, object] = {"replicas": spec.replicas.model_copy(update={"min": low, "max": high})}
    # With a latency limit: cap the batch there, so excess requests wait, and scale on the waiting (yours win).
    cap, waiting = latency_batch(prediction), waiting_target(prediction)
    if cap is not None and cap < spec.max_num_seqs and "max_num_seqs" not in spec.model_fields_set:
        updates["max_num_seqs"] = cap
    autoscaling = spec.autoscaling
    if (
        waiting is not None
        and autoscaling.metric == "num_requests_waiting"
        and "target" not in autoscaling.model_fields_set
    ):
        updates["autoscaling"] = autoscaling.model_copy(update={"target": float(waiting)})
    return spec.model_copy(update=updates), prediction


def _spelled_out(extra_args: list[str]) -> list[str]:
    """extraArgs with argparse's abbreviations of the parallel flags written in full (ledger: vllm.args.abbreviations),
    as parallel_flags' patterns read them."""
    return spelled_out(extra_args, VLLM, known=(PIPELINE_PARALLEL,))


def _check_parallelism(spec: VllmSpec, shape: SliceShape, devices: int) -> None:
    """A `--tensor-parallel-size` (or `-tp`, `-pp`) in extraArgs that contradicts the sized slice, refused in
    one line: the rule of parallel_flags, the one the policy pack applies to the container's arguments."""
    starts, text = [], ""
    spelled = _spelled_out(spec.extra_args)  # `--tensor-parallel=2` is vLLM's -tp too
    for arg in spelled:
        starts.append(len(text))
        text += f"{arg} "
    rule = check_parallelism(text, devices)
    slice_name = f"the {shape.generation} {shape.topology} slice the model is sized for has {devices} devices"

    def index(start: int) -> int:
        return max(i for i, at in enumerate(starts) if at <= start)

    def key(start: int) -> str:
        return f"vllm.extraArgs[{index(start)}]"

    def written(flag: TensorParallelFlag) -> str:
        """The flag as the user wrote it (before its name was spelled out)."""
        at = index(flag.start)
        return flag.written.replace(spelled[at].partition("=")[0], spec.extra_args[at].partition("=")[0], 1)

    pipeline = rule.pipeline_flag
    if pipeline is not None and not rule.pipeline_fits:
        raise UserError(
            key(pipeline.start),
            written(pipeline),
            f"asks for {rule.pipeline} pipeline stages, which do not divide the {devices} devices of the "
            f"{shape.generation} {shape.topology} slice the model is sized for",
            rule.fix,
        )
    if rule.wrong:
        flag = rule.wrong[0]
        raise UserError(
            key(flag.start),
            written(flag),
            f"sets tensor parallelism {flag.value}, but {slice_name}",
            f"{rule.fix}, or leave it out (the stack sets --tensor-parallel-size={rule.expected})",
        )
    if pipeline is not None and rule.pipeline > 1 and not tensor_parallel_flags(text):
        raise UserError(
            key(pipeline.start),
            written(pipeline),
            f"with the stack's --tensor-parallel-size={devices} asks for {devices * rule.pipeline} devices, but "
            f"{slice_name}",
            f"add --tensor-parallel-size={rule.expected} with it, or leave it out",
        )


def _with_repository(spec: VllmSpec, cluster: ClusterPlan) -> VllmSpec:
    """The spec with its registry's repository id decided: the user's as given, else `vllm-tpu-<cluster>`.

    Artifact Registry ids are unique per project and region, and stacks share projects: one fixed
    default made the second stack's `up` fail with AlreadyExists. The scope is the cluster's name, what
    the plan already has that differs between stacks (the pure plan cannot ask Pulumi for the stack's
    name): GKE keeps it unique per project and location and each workload stack creates its own
    cluster. A GKE name (at most 40 characters, a letter first) after the prefix is always a valid id.
    Two stacks on one existing cluster in one region share the default: give each its own repository."""
    registry = spec.registry
    if registry.mode == "none" or registry.repository is not None:
        return spec
    repository = REPOSITORY_ID.check("vllm.registry.repository", f"{REPOSITORY}-{cluster.spec.name}")
    return spec.model_copy(update={"registry": registry.model_copy(update={"repository": repository})})


def _autoscaling(spec: VllmSpec, shape: SliceShape) -> Autoscaling | None:
    """A single-host pool scales node by node between the replica bounds. A multi-host slice is one node
    pool that GKE scales atomically, from 0 to the whole slice (GKE, "About TPUs in GKE": multi-host
    slices scale by node pool, https://cloud.google.com/kubernetes-engine/docs/concepts/tpus): one pool
    per replica up to `replicas.max`, each 0..hosts, also when the count is fixed. So no TPU node exists
    before the RayService asks for its hosts, and the RayService is declared after the weights download
    (vllm/download_plan.py): the slice is not billed idle through it; the cluster autoscaler brings a pool up
    from zero for the pending pods (ledger: gke.autoscaler.scale-from-zero). A capacity fallback's pools are
    created and sized by GKE from the pending replicas (none before they are pending either)."""
    if is_fallback(spec.capacity):
        return None
    if not shape.multi_host:
        return Autoscaling(min_nodes=spec.replicas.min, max_nodes=spec.replicas.max)
    return Autoscaling(min_nodes=0, max_nodes=shape.nodes)


def _plan_cluster(spec: VllmSpec, cluster: ClusterSpec, shape: SliceShape) -> ClusterPlan:
    """One node per replica on a single-host slice; one node pool (slice) per replica on a multi-host one."""
    pool = SliceSpec(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        name=POOL,
        count=spec.replicas.max if shape.multi_host else 1,
        autoscaling=_autoscaling(spec, shape),
        spot=spec.spot,
        reservation=spec.reservation,
        capacity=spec.capacity,
    )
    cluster = require_addons(cluster, "VllmStack", "gcs_fuse", "managed_prometheus")
    if shape.multi_host:  # KubeRay (GKE's Ray add-on, or the user's own: cluster.kuberay) runs the RayService
        cluster = require_ray_operator(cluster, "VllmStack")
    if shape.multi_host and "system_pool" not in cluster.model_fields_set:
        cluster = cluster.model_copy(update={"system_pool": MULTI_HOST_SYSTEM_POOL})
    return plan_workload_cluster(cluster, pool, SLICE_KEYS, "vllm.model")
