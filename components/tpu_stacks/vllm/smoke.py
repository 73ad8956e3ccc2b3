"""vLLM's smoke test: what the first `up` asks the running server (VllmStack's `smoke_test` hook, the descriptor's
`smoke_test`), and the names that request uses (the in-cluster host, the model name the API answers to).
"""

import json
from typing import Any

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.inference_gateway import METRICS_PORT as PICKER_METRICS_PORT
from tpu_stacks.catalog.inference_gateway import SCHEDULED_STATUS
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.serving.smoke_plan import SmokeTest, read_metrics, server_fingerprint
from tpu_stacks.vllm.descriptor import WORKLOAD
from tpu_stacks.vllm.gateway_plan import GATEWAY_NAME, LISTENER_PORT, PICKER_NAME
from tpu_stacks.vllm.multihost_plan import SERVE_PORT
from tpu_stacks.vllm.network import SERVICE
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.pod import API_KEY_SECRET_KEY, SECRET_NAME
from tpu_stacks.vllm.spec import PORT, VllmSpec

SAMPLE_PROMPT = {"prompt": "San Francisco is a", "max_tokens": 7, "temperature": 0}  # the tutorial's request


def in_cluster_host(spec: VllmSpec) -> str:
    return f"{SERVICE}.{spec.namespace}.svc.cluster.local"


def served_model_name(plan: VllmPlan) -> str:
    """The model name the API answers to: `--served-model-name` when the extra arguments set it, else `--model`
    (ledger: vllm.flag.served-model-name)."""
    return flag_value(plan.engine_args(), "--served-model-name", VLLM) or plan.model.id


def smoke_test(plan: VllmPlan, monitoring: MonitoringPlan) -> SmokeTest:
    """One short completion (the tutorial's prompt) through the Service, then /metrics on the same port. Behind
    GKE Inference Gateway the completion goes through the Gateway's address instead, and the picker's count of
    successful picks must rise across it (k8s/smoke_check.py): `up` then proves the route, the pool and the picker."""
    base = f"http://{in_cluster_host(plan.spec)}:{PORT}"
    if plan.multi_host:
        # Through the same Service to Ray Serve LLM's OpenAI app, which serves /v1/completions
        # (ray.serve.llm build_openai_app, docs.ray.io serve/llm "Serving LLMs": the endpoints it supports).
        # No /metrics there: Ray exports them per pod on its metrics port, which Managed Prometheus scrapes.
        return SmokeTest(
            answer=WORKLOAD.smoke_answer or "",
            namespace=plan.spec.namespace,
            url=f"{base}/v1/completions",
            body=json.dumps({"model": plan.model.id, **SAMPLE_PROMPT}, sort_keys=True),
            image=PYTHON_IMAGE,
            server=server_fingerprint(plan.spec),
            ports=(SERVE_PORT,),
        )
    gateway: dict[str, Any] = {}
    if plan.gateway is not None and plan.gateway.smoke_through:
        namespace = plan.spec.namespace
        counter = {"name": plan.gateway.picker.metrics.picks, "labels": {"status": SCHEDULED_STATUS}}
        gateway = {
            "url": f"http://{{gateway}}:{LISTENER_PORT}/v1/completions",  # the script reads the Gateway's address
            "gateway": (namespace, GATEWAY_NAME),
            "picker_metrics_url": f"http://{PICKER_NAME}.{namespace}.svc.cluster.local:{PICKER_METRICS_PORT}/metrics",
            "picker_counter": json.dumps(counter, sort_keys=True),
        }
    return SmokeTest(
        answer=WORKLOAD.smoke_answer or "",
        namespace=plan.spec.namespace,
        url=gateway.pop("url", f"{base}/v1/completions"),
        body=json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT}, sort_keys=True),
        image=PYTHON_IMAGE,
        server=server_fingerprint(plan.spec),
        ports=(PORT,),
        metrics_url=f"{base}/metrics",  # the API server serves /metrics on its own port (vllm/monitoring.py)
        metrics=read_metrics(monitoring),
        api_key=(SECRET_NAME, API_KEY_SECRET_KEY) if plan.spec.api_key else None,
        **gateway,
    )
