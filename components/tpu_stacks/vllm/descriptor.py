"""The vLLM workload as the registry (tpu_stacks/registry.py) sees it. Pure data: loads no provider SDK."""

from tpu_stacks.registry import Export, Ref, Workload

WORKLOAD = Workload(
    name="vllm",
    section="vllm",
    spec=Ref("tpu_stacks.vllm.spec:VllmSpec"),
    args=Ref("tpu_stacks.vllm.args:VllmStackArgs"),
    plan=Ref("tpu_stacks.vllm.plan:plan_vllm"),
    component=Ref("tpu_stacks.vllm.component:VllmStack"),
    monitoring_target=Ref("tpu_stacks.vllm.monitoring:vllm_target"),
    dashboard_sections=Ref("tpu_stacks.vllm.monitoring:vllm_sections"),
    status_cards=Ref("tpu_stacks.vllm.monitoring:vllm_status_cards"),
    network=Ref("tpu_stacks.vllm.network:network"),
    smoke_test=Ref("tpu_stacks.vllm.smoke:smoke_test"),
    smoke_answer="openai-completion",
    args_docs=(
        ("ReplicaArgs", "ReplicaSpec"),
        ("HpaArgs", "AutoscalingSpec"),
        ("RegistryArgs", "RegistrySpec"),
        ("ServerResourcesArgs", "ResourcesSpec"),
        ("VllmStackArgs", "VllmSpec"),
    ),
    exports=(
        Export("clusterName", "cluster.cluster_name"),
        Export("kubeconfig", "cluster.kubeconfig"),
        Export("serviceAddress", "service_address"),
        Export("baseUrl", "base_url"),
        Export("model", "model_id"),
        Export("slice", "served_slice"),
        Export("weightsBucket", "weights_bucket"),
        Export("curl", "curl"),
        Export("imageBuild", "image_build", optional=True),
        Export("monitoring", "monitoring"),
    ),
    secrets=(("hf_token", "hfToken"), ("api_key_secret", "vllmApiKey")),
    engines=("vllm", "epp", "ray"),  # the endpoint picker runs with vllm.gateway, Ray (Serve) on multi-host slices
    sizing_engine="vllm",
    example_stack="vllm",
)
