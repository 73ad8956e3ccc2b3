"""The SGLang-JAX workload as the registry (tpu_stacks/registry.py) sees it. Pure data: loads no provider SDK.

What it does not declare, because the pinned SGLang-JAX (0.0.1.post1) does not have it: no status cards and no
alerts of its own, and no metrics anywhere (ledger: sglang.metrics.none: `--enable-metrics` is parsed and read
nowhere, no route serves /metrics), so its monitoring target has no metrics port, there is no HPA on its metrics,
its dashboard is GKE's TPU and container metrics, and its smoke test checks the completion only. GKE Inference
Gateway could not front it either: the endpoint picker scores replicas by their queue and KV-cache metrics, which
this server does not export (its engine's gateway answer, engine.py).

Its engine is declared here too (`engine`, engine.py): the pinned record, its traffic entry, its HTTP API and the
model classes it serves, which the catalogue collects through the registry.
"""

from tpu_stacks.registry import Export, Ref, Workload

WORKLOAD = Workload(
    name="sglang",
    section="sglang",
    spec=Ref("tpu_stacks.sglang.spec:SglangSpec"),
    args=Ref("tpu_stacks.sglang.args:SglangStackArgs"),
    plan=Ref("tpu_stacks.sglang.plan:plan_sglang"),
    component=Ref("tpu_stacks.sglang.component:SglangStack"),
    monitoring_target=Ref("tpu_stacks.sglang.monitoring:sglang_target"),
    dashboard_sections=Ref("tpu_stacks.sglang.monitoring:sglang_sections"),
    network=Ref("tpu_stacks.sglang.network:network"),
    smoke_test=Ref("tpu_stacks.sglang.component:smoke_test"),
    smoke_answer="openai-completion",
    args_docs=(
        ("SglangResourcesArgs", "ResourcesSpec"),
        ("SglangStackArgs", "SglangSpec"),
    ),
    exports=(
        Export("clusterName", "cluster.cluster_name"),
        Export("kubeconfig", "cluster.kubeconfig"),
        Export("serviceAddress", "service_address"),
        Export("baseUrl", "base_url"),
        Export("model", "model_id"),
        Export("slice", "served_slice"),
        Export("image", "image"),
        Export("imageBuild", "image_build"),
        Export("weightsBucket", "weights_bucket"),
        Export("curl", "curl"),
        Export("monitoring", "monitoring"),
    ),
    secrets=(("hf_token", "hfToken"),),
    engine=Ref("tpu_stacks.sglang.engine:ENGINE"),
    engines=("sglang",),
    sizing_engine="sglang",
    example_stack="sglang",
)
