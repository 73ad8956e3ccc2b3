"""A user's program: one TPU v6e serving cluster from tpu-stacks, nothing else."""

import pulumi

from tpu_stacks.cluster.component import TpuCluster

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")

cluster = TpuCluster(
    "serving",
    {
        "project": project,
        "name": "serving",
        "location": config.get("zone") or "us-central1-b",
        "release_channel": "RAPID",
        "slices": [{"generation": "v6e", "topology": "2x4", "autoscaling": {"min_nodes": 1, "max_nodes": 2}}],
    },
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("slices", cluster.slices)
pulumi.export("kubeconfig", cluster.kubeconfig)
