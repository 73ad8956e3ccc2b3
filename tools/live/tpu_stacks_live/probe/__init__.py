"""`tpu-stacks verify --probe`: each flow of the stack's connectivity contract tried by a short-lived pod.

The contract is read from the rendered objects (the `tpu-stacks.dev/flows` annotation of each NetworkPolicy),
never from a stack's name (contract.py). For each flow kind a probe pod carries the labels of the pods whose
flow it is, so their NetworkPolicies apply to it (plan.py: which probes, what answer each expects); it is
hardened like every workload pod and carries a readiness gate nobody sets, so it never becomes Ready and no
Service sends it traffic (pod.py); it runs a small standard-library Python program, not a shell script
(agent.py); it is deleted afterwards, even when the run fails (run.py).

Creating those pods is the one write `verify --probe` makes; `verify` without it only reads. Leftovers of a
crashed run: `kubectl get pods -A -l tpu-stacks.dev/probe=true`.
"""

from tpu_stacks_live.probe.run import probe_checks

HELP = (
    "also try each flow of the stack's connectivity contract (DNS, the TPU runtime, the metadata server, the API "
    "server, peer to peer, and that unnamed pods are refused) from short-lived hardened pods that never become "
    "Ready and are deleted afterwards. Creating those pods is the only write verify makes; without --probe it "
    "only reads. Needs create, get, list and delete on pods in the stack's namespaces."
)
"""The `--probe` option's help, for the verify command to use as is."""

__all__ = ["HELP", "probe_checks"]
