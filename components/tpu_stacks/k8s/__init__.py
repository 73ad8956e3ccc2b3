"""Pod-spec pieces shared by the workload stacks (TPU scheduling, GCS FUSE, probes)."""
