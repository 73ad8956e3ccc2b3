"""The Ray Train workload as the registry (tpu_stacks/registry.py) sees it. Pure data: loads no provider SDK."""

from tpu_stacks.registry import Export, Ref, Workload

WORKLOAD = Workload(
    name="raytrain",
    section="raytrain",
    spec=Ref("tpu_stacks.raytrain.spec:RayTrainSpec"),
    args=Ref("tpu_stacks.raytrain.args:RayTrainStackArgs"),
    plan=Ref("tpu_stacks.raytrain.plan:plan_raytrain"),
    component=Ref("tpu_stacks.raytrain.component:RayTrainStack"),
    monitoring_target=Ref("tpu_stacks.raytrain.monitoring:raytrain_target"),
    dashboard_sections=Ref("tpu_stacks.raytrain.monitoring:raytrain_sections"),
    status_cards=Ref("tpu_stacks.raytrain.monitoring:raytrain_status_cards"),
    alerts=Ref("tpu_stacks.raytrain.monitoring:raytrain_alerts"),
    network=Ref("tpu_stacks.raytrain.network:network"),
    smoke_test=None,  # a training job: the RayJob's own success is its check
    args_docs=(
        ("ImageSourceArgs", "SourceSpec"),
        ("ImageArgs", "ImageSpec"),
        ("HeadArgs", "HeadSpec"),
        ("WorkerArgs", "WorkerSpec"),
        ("RayTrainStackArgs", "RayTrainSpec"),
    ),
    exports=(
        Export("clusterName", "cluster.cluster_name"),
        Export("kubeconfig", "cluster.kubeconfig"),
        Export("slice", "training_slice"),
        Export("checkpointBucket", "checkpoint_bucket"),
        Export("checkpointPath", "checkpoint_path"),
        Export("image", "image"),
        Export("imageBuildCommand", "image_build_command"),
        Export("rayCluster", "ray_cluster_name"),
        Export("rayJob", "ray_job_name"),
        Export("dashboard", "dashboard_port_forward"),
        Export("jobSubmit", "job_submit_command"),
        Export("maxtextArgs", "maxtext_args"),
        Export("monitoring", "monitoring"),
    ),
    prepare_args=Ref("tpu_stacks.raytrain.sources:with_default_tag"),
    engine=Ref("tpu_stacks.raytrain.engine:ENGINE"),  # MaxText; Ray is the catalogue's own (shared)
    engines=("ray", "maxtext"),
    example_stack="raytrain",
)
