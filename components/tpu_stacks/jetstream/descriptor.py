"""The JetStream workload as the registry (tpu_stacks/registry.py) sees it. Pure data: loads no provider SDK."""

from tpu_stacks.registry import Export, Ref, Workload

WORKLOAD = Workload(
    name="jetstream",
    section="jetstream",
    spec=Ref("tpu_stacks.jetstream.spec:JetStreamSpec"),
    args=Ref("tpu_stacks.jetstream.args:JetStreamStackArgs"),
    plan=Ref("tpu_stacks.jetstream.plan:plan_jetstream"),
    component=Ref("tpu_stacks.jetstream.component:JetStreamStack"),
    monitoring_target=Ref("tpu_stacks.jetstream.monitoring:jetstream_target"),
    dashboard_sections=Ref("tpu_stacks.jetstream.monitoring:jetstream_sections"),
    status_cards=Ref("tpu_stacks.jetstream.monitoring:jetstream_status_cards"),
    network=Ref("tpu_stacks.jetstream.network:network"),
    smoke_test=Ref("tpu_stacks.jetstream.component:smoke_test"),
    smoke_answer="jetstream-generate",
    args_docs=(
        ("JetStreamConverterArgs", "ConverterSpec"),
        ("JetStreamResourcesArgs", "ResourcesSpec"),
        ("JetStreamStackArgs", "JetStreamSpec"),
    ),
    exports=(
        Export("clusterName", "cluster.cluster_name"),
        Export("kubeconfig", "cluster.kubeconfig"),
        Export("serviceName", "service_name"),
        Export("portForward", "port_forward"),
        Export("curl", "curl"),
        Export("checkpointPath", "checkpoint_path"),
        Export("checkpointBucket", "checkpoint_bucket"),
        Export("converterJob", "converter_job"),
        Export("model", "model_id"),
        Export("slice", "served_slice"),
        Export("monitoring", "monitoring"),
    ),
    secrets=(("hf_token", "hfToken"),),
    engine=Ref("tpu_stacks.jetstream.engine:ENGINE"),
    engines=("jetstream",),
    sizing_engine="jetstream",
    example_stack="jetstream-gemma",
)
