"""Every decision of a Saxml deployment, made once before any resource: raises UserError or
returns a `SaxmlPlan` the component only turns into resources. Pure: no provider SDK.

Derived, never hand-copied: the slice comes from the memory model (sizing.py) on the catalogue's
shapes, and the cluster that holds `replicas` of it is planned once here (`plan_workload_cluster`).
The JobSet's hosts per slice and each pod's `google.com/tpu` both read the shape the pools are
planned with (`PoolPlan.shape`, `SaxmlPlan.pool_shape`); node selectors and `--platform_topology`
follow from the same slice.
Published models are checked against it too.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.models import ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import PRIVILEGED_NOT_NEEDED_SINCE, SliceShape, generation, gke_version
from tpu_stacks.cluster.plan import ClusterPlan, WorkloadPlan, plan_workload_cluster
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.images import check_pinned
from tpu_stacks.names import check_gcs_path, check_node_service_account
from tpu_stacks.saxml.engine import SAXML
from tpu_stacks.saxml.spec import MODEL_PORT, SAX_CELL, TUTORIAL_MODEL_NAME, ImagesSpec, SaxmlSpec
from tpu_stacks.serving.exposure import check_source_ranges, require_clients
from tpu_stacks.sizing import Candidate, ServingRequest, choose_slice, gib, judge, slice_refusal

MIN_JOBSET = (0, 12, 0)  # the failure policy's RestartJob actions are in this release's CRD
MODEL_NAME = re.compile(rf"^{re.escape(SAX_CELL)}/[A-Za-z0-9][A-Za-z0-9_.-]*$")
SAXML_PACKAGE = "saxml."  # registry paths of Saxml model classes
SLICE_KEYS = {
    "generation": "saxml.tpuGeneration",
    "topology": "saxml.topology",
    "name": "saxml.poolName",
    "count": "saxml.replicas",
    "spot": "saxml.spot",
    "reservation": "saxml.reservation",
    "capacity": "saxml.capacity",
}
"""The derived slice's fields, as the user spells them in the saxml section."""


class PublishedModel(BaseModel):
    """One model to publish, resolved: the exact `/publish` body."""

    model_config = ConfigDict(frozen=True)

    model: str
    model_path: str
    checkpoint: str
    replicas: int

    def body(self) -> dict[str, object]:
        return {
            "model": self.model,
            "model_path": self.model_path,
            "checkpoint": self.checkpoint,
            "replicas": self.replicas,
        }


class SaxmlPlan(WorkloadPlan):
    """Everything decided for one Saxml deployment: `replicas` slices of the sized shape (one node pool per
    multi-host slice)."""

    spec: SaxmlSpec
    request: ServingRequest
    platform_chip: str
    host_network: bool
    models: tuple[PublishedModel, ...]

    @property
    def slices(self) -> int:
        return self.spec.replicas

    @property
    def pool_shape(self) -> SliceShape:
        """The shape the model servers' pools are declared with (one slice spec: all pools share it).
        Hosts per slice and chips per host both read it, so they cannot disagree with the pools."""
        return self.pool.shape

    @property
    def hosts(self) -> int:
        """Pods per slice: one per TPU VM (JobSet parallelism and completions)."""
        return self.pool_shape.nodes

    @property
    def chips_per_host(self) -> int:
        """Each model server pod's `google.com/tpu`: every chip of its VM."""
        return self.pool_shape.chips_per_vm

    def model_server_args(self) -> list[str]:
        return [
            f"--port={MODEL_PORT}",
            f"--sax_cell={SAX_CELL}",
            f"--platform_chip={self.platform_chip}",
            f"--platform_topology={self.shape.topology}",
        ]


def _check_exposure(spec: SaxmlSpec) -> None:
    """Sax HTTP exposes /publish, /unpublish and /update without authentication ([SAX-HTTP])."""
    what = "that can publish and unpublish models"
    check_source_ranges("saxml", spec.exposure, spec.source_ranges, what)
    require_clients("saxml", spec.exposure, spec.source_ranges, what, "Sax HTTP has no authentication")


def _check_jobset(spec: SaxmlSpec) -> None:
    version = spec.jobset.version
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        raise UserError("saxml.jobset.version", version, "is not a JobSet release tag", "pin a release such as v0.12.0")
    if tuple(int(part) for part in match.groups()) < MIN_JOBSET:
        raise UserError(
            "saxml.jobset.version",
            version,
            "lacks the RestartJob failure-policy actions the model servers use",
            "use v0.12.0 or later",
        )


def _check_accounts(spec: SaxmlSpec, cluster: ClusterSpec) -> None:
    """The nodes' service account email. (gsaName, ksaName, namespace and checkpointBuckets are checked by
    their field types, names.py's rules, when the spec is parsed.)"""
    if spec.node_service_account is not None:
        check_node_service_account(spec.node_service_account, "saxml.nodeServiceAccount", cluster.existing is not None)


def _check_cluster(host_network: bool, cluster: ClusterSpec) -> None:
    min_version = cluster.min_version
    if cluster.mode == "autopilot" and host_network:
        raise UserError(
            "cluster.mode",
            "autopilot",
            "does not allow hostNetwork, which Saxml's multi-host model servers use upstream",
            "use mode standard, or set saxml.hostNetwork: false",
        )
    if min_version and gke_version(min_version) < gke_version(PRIVILEGED_NOT_NEEDED_SINCE):
        raise UserError(
            "cluster.minVersion",
            min_version,
            "needs privileged TPU containers, which tpu-stacks does not run",
            f"use {PRIVILEGED_NOT_NEEDED_SINCE} or later",
        )


def _platform_chip(generation_name: str) -> str:
    """The model server's `--platform_chip` for a generation `_size` accepted (saxml/engine.py, SAXML)."""
    chip = SAXML.platform(generation_name)
    if chip is None:
        raise ValueError(f"Saxml names no --platform_chip for {generation_name}")
    return chip


def _size(spec: SaxmlSpec, model: ResolvedModel, request: ServingRequest) -> Candidate:
    gen = generation(spec.tpu_generation, key="saxml.tpuGeneration")
    if SAXML.platform(gen.name) is None:  # the model server's --platform_chip (catalog/engines/)
        raise UserError(
            "saxml.tpuGeneration",
            spec.tpu_generation,
            "has no --platform_chip value known for Saxml's model server",
            f"use {', '.join(SAXML.served_generations or ())}",
        )
    verdict = choose_slice(request, gen, spec.topology, "saxml")
    mesh = model.architecture.mesh_devices
    if mesh and verdict.shape.jax_devices != mesh:
        raise slice_refusal(
            "saxml",
            spec.topology,
            spec.model,
            verdict.shape,
            f"gives {verdict.shape.jax_devices} devices but {model.id}'s ICI mesh needs exactly {mesh}",
            f"set saxml.topology: {_topology_with(gen.name, mesh)}",
        )
    return verdict


def _topology_with(gen: str, devices: int) -> str:
    chosen = generation(gen)
    names = [t.text for t in chosen.topologies if t.chips * chosen.jax_devices_per_chip == devices]
    return names[0] if names else f"a slice of {devices} devices"


def _published(
    spec: SaxmlSpec, sized: ResolvedModel, shape: SliceShape, request: ServingRequest
) -> tuple[PublishedModel, ...]:
    entries = spec.models if spec.models is not None else [None]
    resolved: list[PublishedModel] = []
    for index, entry in enumerate(entries):
        key = f"saxml.models[{index}]"
        path = entry.model_path if entry else None
        if path is None and not sized.id.startswith(SAXML_PACKAGE):
            raise UserError(
                f"{key}.modelPath",
                MISSING,
                f"is required: saxml.model {sized.id} is not a Saxml registry path",
                "name the Saxml model class, e.g. saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
            )
        model = PublishedModel(
            model=entry.model if entry else TUTORIAL_MODEL_NAME,
            model_path=path or sized.id,
            checkpoint=entry.checkpoint if entry else "None",
            replicas=(entry.replicas if entry else None) or spec.replicas,
        )
        if not MODEL_NAME.match(model.model):
            raise UserError(
                f"{key}.model",
                model.model,
                f"is not a model name in Saxml cell {SAX_CELL}",
                f"name it {SAX_CELL}/<name>",
            )
        if model.checkpoint != "None" and not model.checkpoint.startswith("gs://"):
            raise UserError(
                f"{key}.checkpoint",
                model.checkpoint,
                "is neither None nor a gs:// path",
                "write None or gs://BUCKET/PATH",
            )
        if model.checkpoint != "None":
            check_gcs_path(model.checkpoint, f"{key}.checkpoint")
        if model.replicas > spec.replicas:
            raise UserError(
                f"{key}.replicas",
                model.replicas,
                f"needs {model.replicas} model servers but the stack runs {spec.replicas} slice(s)",
                f"raise saxml.replicas to {model.replicas} or publish at most {spec.replicas} replicas",
            )
        if any(other.model == model.model for other in resolved):
            raise UserError(f"{key}.model", model.model, "is published twice", "give each model one entry")
        _check_fit(f"{key}.modelPath", model.model_path, shape, request)
        resolved.append(model)
    _check_shared_servers(resolved, spec.replicas, shape, request)
    return tuple(resolved)


def _known(path: str) -> ResolvedModel | None:
    try:
        return lookup_model(path)
    except UserError:
        return None  # a registry path the catalogue does not know: published unchecked (docs/saxml.md)


def _check_fit(key: str, path: str, shape: SliceShape, request: ServingRequest) -> None:
    model = _known(path)
    if model is None:
        return
    verdict = judge(request.model_copy(update={"model": model}), shape)
    if not verdict.fits:
        raise UserError(
            key,
            path,
            f"needs {gib(verdict.memory.total_bytes)}, more than one {shape.generation} {shape.topology} "
            f"slice holds ({gib(verdict.usable_bytes)} usable)",
            "publish it on a larger saxml.topology",
        )
    mesh = model.architecture.mesh_devices
    if mesh and mesh != shape.jax_devices:
        raise UserError(
            key,
            path,
            f"has an ICI mesh of {mesh} devices but each slice has {shape.jax_devices}",
            f"use a {mesh}-chip saxml.topology for it",
        )


def _check_shared_servers(
    models: list[PublishedModel], servers: int, shape: SliceShape, request: ServingRequest
) -> None:
    """More replicas than servers means servers hold several models at once: they must fit together."""
    if sum(model.replicas for model in models) <= servers:
        return
    known = [(model, found) for model in models if (found := _known(model.model_path)) is not None]
    need = sum(judge(request.model_copy(update={"model": found}), shape).memory.total_bytes for _, found in known)
    usable = judge(request, shape).usable_bytes
    if need > usable:
        total = sum(model.replicas for model in models)
        raise UserError(
            "saxml.models",
            f"{total} replicas on {servers} model servers",
            "would make servers hold several models at once: "
            f"together they need {gib(need)}, a slice has {gib(usable)} usable",
            "raise saxml.replicas or publish fewer replicas",
        )


def plan_saxml(spec: SaxmlSpec, cluster: ClusterSpec) -> SaxmlPlan:
    """Size the slices, check every setting and plan the cluster; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="saxml.model")
    request = ServingRequest(
        model=model, engine="saxml", context=spec.input_seq_len + spec.max_decode_steps, batch=spec.batch_size
    )
    verdict = _size(spec, model, request)
    host_network = verdict.shape.multi_host if spec.host_network is None else spec.host_network
    pinned = ImagesSpec().model_dump(by_alias=True)
    for field, image in spec.images.model_dump(by_alias=True).items():
        check_pinned(image, f"saxml.images.{field}", pinned[field])
    _check_exposure(spec)
    _check_jobset(spec)
    _check_accounts(spec, cluster)
    _check_cluster(host_network, cluster)
    models = _published(spec, model, verdict.shape, request)
    return SaxmlPlan(
        spec=spec,
        model=model,
        request=request,
        verdict=verdict,
        platform_chip=_platform_chip(verdict.shape.generation),
        host_network=host_network,
        models=models,
        cluster=_plan_cluster(spec, cluster, verdict.shape),
    )


def _plan_cluster(spec: SaxmlSpec, cluster: ClusterSpec, shape: SliceShape) -> ClusterPlan:
    """`replicas` slices of the sized shape, named by `poolName`; the nodes run as `saxml.nodeServiceAccount`
    (the account granted the admin bucket) unless `cluster.nodeServiceAccount` names one."""
    slices = SliceSpec(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        name=spec.pool_name,
        count=spec.replicas,
        spot=spec.spot,
        reservation=spec.reservation or None,
        capacity=spec.capacity,
    )
    if cluster.node_service_account is None and spec.node_service_account is not None:
        cluster = cluster.model_copy(update={"node_service_account": spec.node_service_account})
    return plan_workload_cluster(cluster, slices, SLICE_KEYS, "saxml.model and saxml.replicas")
