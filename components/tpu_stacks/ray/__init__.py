"""Ray's home: what every Ray cluster this project runs shares, whichever workload runs it (Ray Train's RayCluster,
multi-host vLLM's RayService). Not a workload (no descriptor): the workloads import from here, never from each
other.

- `ports`: the head's ports by KubeRay's container port names, at each workload's pinned Ray (the ledger's rows);
- `pods`: the labels our Ray pods carry and the size of Ray's session directory;
- `flows`: the connectivity every KubeRay cluster needs (within the cluster, the operator to the head).
"""
