"""What `bench` measures, read from the stack's offline plan: the server's address, its model, its pods, its slice.

Everything comes from the rendered objects, never from a stack's name:
- the smoke-test Job (k8s/smoke.py) names the answer the server speaks (`SMOKE_ANSWER`; bench drives the OpenAI
  completions API, `openai-completion`), the served model (`SMOKE_BODY`'s `model`) and, when the server wants
  one, the Secret holding its API key (`SMOKE_API_KEY`);
- the smoke-test NetworkPolicy's flows (the connectivity contract, `tpu-stacks.dev/flows`) name the server's pods
  and the port the smoke test calls them on: bench calls the same pods on the same port, so the server's own
  policy, which admits the smoke test there, admits bench;
- the Service that selects those pods and forwards to that port gives the address (`<service>.<namespace>.svc`);
- the server's pod template gives the Hugging Face model id (vLLM's `--model`, the tokenizer inference-perf
  loads), the slice (`cloud.google.com/gke-tpu-accelerator` and `-topology` node selectors, `google.com/tpu`
  chips) and the engine's image (its tag is the server version a profile records); the node pool's machine type
  is the profile's instance type.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from tpu_stacks.catalog.engines import engine_of_command, engine_of_image
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.upstream import text
from tpu_stacks.errors import UserError
from tpu_stacks.k8s.connectivity import ANNOTATION
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS
from tpu_stacks_live.probe.contract import _pod_templates, selects
from tpu_stacks_live.verify.plan import NODE_POOL, StackPlan, name_of, namespace_of

OPENAI_ANSWER = "openai-completion"
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_RESOURCE = "google.com/tpu"
SMOKE_POLICY = "smoke-test"
"""The smoke-test group's NetworkPolicy name (k8s.platform_flows.smoke_test_group)."""


@dataclass(frozen=True)
class BenchTarget:
    """The server bench calls and what its profile records."""

    stack: str
    namespace: str
    service: str
    service_port: int
    server_labels: dict[str, str] = field(hash=False)
    server_port: int = 0
    """The pods' port the Service forwards to: what the bench pod's egress policy opens."""
    served_model: str = ""
    """The name requests carry (`model`)."""
    model: str = ""
    """The Hugging Face id (`--model`): the tokenizer, and the profile's model."""
    engine: str = "vllm"
    engine_version: str = ""
    accelerator: str = ""
    topology: str = ""
    chips: int | None = None
    machine_type: str = ""
    api_key_secret: tuple[str, str] | None = None
    """The Secret and key of the server's API key (the smoke test's `SMOKE_API_KEY`)."""
    hf_token: tuple[str, str, str] | None = None
    """(Secret, key, path) of the Hugging Face token the server reads from a file (`HF_TOKEN_PATH`, a gated model)."""

    @property
    def base_url(self) -> str:
        """The Service's root, no path: inference-perf adds the API's route (ledger: inference-perf.server.base-url)."""
        return f"http://{self.service}.{self.namespace}.svc.cluster.local:{self.service_port}"


def _refuse(stack: str, problem: str, fix: str) -> UserError:
    return UserError("--stack", stack, problem, fix)


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env") or [] if "name" in e}


def _smoke_job(plan: StackPlan) -> dict[str, Any]:
    """The smoke-test Job that calls the server's Service (not the one through a Gateway)."""
    jobs = []
    for job in plan.of_kind("Job", "batch"):
        labels = (job.get("metadata") or {}).get("labels") or {}
        if selects(SMOKE_TEST_LABELS, labels):
            jobs.append(job)
    fix = "bench needs a serving stack with its smoke test on (a vLLM section without `smokeTest: false`)"
    if not jobs:
        raise _refuse(plan.stack, "has no server to bench (its plan has no smoke-test Job)", fix)
    direct = [j for j in jobs if "SMOKE_GATEWAY" not in _env(j["spec"]["template"]["spec"]["containers"][0])]
    return (direct or jobs)[0]


def _server_flow(plan: StackPlan, namespace: str) -> tuple[dict[str, str], int]:
    """The server's pod labels and the first port the smoke test calls them on, from the smoke-test policy."""
    for policy in plan.of_kind("NetworkPolicy"):
        if name_of(policy) != SMOKE_POLICY or namespace_of(policy) != namespace:
            continue
        flows = json.loads(((policy.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION, "[]"))
        for flow in flows:
            peer = flow.get("peer") or {}
            if flow.get("direction") == "egress" and peer.get("kind") == "pods" and peer.get("labels"):
                return dict(peer["labels"]), int(flow["port"])
    raise _refuse(plan.stack, f"has no smoke-test NetworkPolicy in {namespace} naming the server's pods",
                  "plan the stack with its network policies on (they carry the connectivity contract)")  # fmt: skip


def _service(plan: StackPlan, namespace: str, labels: dict[str, str], port: int) -> tuple[str, int]:
    for service in plan.of_kind("Service"):
        spec = service.get("spec") or {}
        selector = spec.get("selector") or {}
        # the Service may select more labels than the contract names (Ray Serve's `ray.io/serve` on the head)
        if namespace_of(service) != namespace or not selector or not selects(labels, selector):
            continue
        for entry in spec.get("ports") or []:
            if int(entry.get("targetPort", entry.get("port"))) == port:
                return name_of(service), int(entry["port"])
    raise _refuse(plan.stack, f"has no Service in {namespace} forwarding to the server's port {port}",
                  "bench calls the server through its Service, as the smoke test does")  # fmt: skip


def _templates(plan: StackPlan, namespace: str) -> list[dict[str, Any]]:
    """The pod templates of the namespace's workloads (Deployments, Jobs, RayServices alike)."""
    found = []
    for obj in plan.objects:
        if namespace_of(obj) == namespace and obj.get("kind") not in ("NetworkPolicy", "Service"):
            found += list(_pod_templates(obj))
    return found


def _server_template(plan: StackPlan, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    for template in _templates(plan, namespace):
        if selects(labels, (template.get("metadata") or {}).get("labels") or {}):
            return template
    raise _refuse(plan.stack, "has no pod template with the server's labels", "plan the stack: `tpu-stacks plan`")


def _tpu_template(templates: list[dict[str, Any]], server: dict[str, Any]) -> dict[str, Any]:
    """The template of the pods holding the TPU slice: the server's own, or (a multi-host slice, whose Serve head
    has no TPU) the first of the namespace's templates that selects a TPU accelerator."""
    for template in [server, *templates]:
        if ACCELERATOR_LABEL in ((template.get("spec") or {}).get("nodeSelector") or {}):
            return template
    return server


def _model(record: EngineVersion, args: list[str]) -> str | None:
    """The model the server loads, under the engine's own model flag or one of its aliases."""
    flag = record.flag("model")
    names = (flag.name, *flag.aliases) if flag is not None else ()
    return next((value for name in names if (value := flag_value(args, name, record))), None)


def _secret_ref(env: dict[str, dict[str, Any]], name: str) -> tuple[str, str] | None:
    ref = ((env.get(name) or {}).get("valueFrom") or {}).get("secretKeyRef")
    return (ref["name"], ref["key"]) if ref else None


def _hf_token(templates: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """The Hugging Face token file of the stack's pods (the server's first): `HF_TOKEN_PATH` (huggingface_hub reads
    the token from that file, in the vLLM image's 1.x and the SGLang image's 0.34 alike, ledger:
    huggingface-hub-vllm.token-path, huggingface-hub-vllm.token-file, huggingface-hub-sglang.token-path,
    huggingface-hub-sglang.token-file), the mount
    holding it and the Secret that volume projects (vllm/pod.py mounts the key
    as a file, never as an environment value)."""
    for template in templates:
        spec = template.get("spec") or {}
        for container in spec.get("containers") or []:
            path = ((_env(container).get(text("huggingface-hub-vllm.token-path")) or {}).get("value")) or ""
            directory, _, file = path.rpartition("/")
            mount = next((m for m in container.get("volumeMounts") or [] if m.get("mountPath") == directory), None)
            volume = next((v for v in spec.get("volumes") or [] if mount and v.get("name") == mount.get("name")), None)
            secret = (volume or {}).get("secret")
            if path and secret:
                key = next((i["key"] for i in secret.get("items") or [] if i.get("path") == file), file)
                return str(secret["secretName"]), str(key), path
    return None


def _chips(topology: str, limit: Any) -> int | None:
    """The slice's chips: the product of its topology (every host's), else the pod's `google.com/tpu` limit."""
    try:
        return math.prod(int(d) for d in topology.split("x")) if topology else int(limit)
    except (TypeError, ValueError):
        return None


def _machine_type(plan: StackPlan, topology: str) -> str:
    """The TPU node pool's machine type (none when the stack creates no pool, e.g. a ComputeClass makes them)."""
    for pool in plan.of_type(NODE_POOL):
        config = pool.inputs.get("nodeConfig") or {}
        placement = pool.inputs.get("placementPolicy") or {}
        if placement.get("tpuTopology", topology) == topology and config.get("machineType", "").startswith("ct"):
            return str(config["machineType"])
    return ""


def bench_target(plan: StackPlan) -> BenchTarget:
    """The server of `plan` that bench can drive; a stack with none is one UserError."""
    job = _smoke_job(plan)
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = _env(container)
    answer = (env.get("SMOKE_ANSWER") or {}).get("value", "")
    if answer != OPENAI_ANSWER:
        raise _refuse(plan.stack, f"serves `{answer}`, not the OpenAI completions API inference-perf drives",
                      "bench a stack whose server speaks the OpenAI API (a vLLM section)")  # fmt: skip
    namespace = namespace_of(job)
    served = str(json.loads((env.get("SMOKE_BODY") or {}).get("value", "{}")).get("model", ""))
    labels, port = _server_flow(plan, namespace)
    service, service_port = _service(plan, namespace, labels, port)
    templates = _templates(plan, namespace)
    template = _server_template(plan, namespace, labels)
    server = template["spec"]["containers"][0]
    args = [*(server.get("command") or []), *(server.get("args") or [])]
    image = str(server.get("image", ""))
    # The profile names the server that ran (a profile is evidence only for its own engine): the catalogue's
    # record, by the command the container runs, else by its image.
    record = engine_of_command(args) or engine_of_image(image)
    if record is None or record.workload != "serve":
        raise UserError("--stack", plan.stack, f"runs a server tpu-stacks has no engine record for ({image})",
                        "bench a stack whose server is a catalogued engine")  # fmt: skip
    tpu = _tpu_template(templates, template)["spec"]
    selector = tpu.get("nodeSelector") or {}
    limit = (((tpu["containers"][0]).get("resources") or {}).get("limits") or {}).get(TPU_RESOURCE)
    accelerator, topology = str(selector.get(ACCELERATOR_LABEL, "")), str(selector.get(TOPOLOGY_LABEL, ""))
    return BenchTarget(
        stack=plan.stack,
        namespace=namespace,
        service=service,
        service_port=service_port,
        server_labels=labels,
        server_port=port,
        served_model=served,
        model=_model(record, args) or served,
        engine=record.engine,
        engine_version=image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else "",
        accelerator=accelerator,
        topology=topology,
        chips=_chips(topology, limit),
        machine_type=_machine_type(plan, topology),
        api_key_secret=_secret_ref(env, "SMOKE_API_KEY"),
        hf_token=_hf_token([template, *templates]),
    )
