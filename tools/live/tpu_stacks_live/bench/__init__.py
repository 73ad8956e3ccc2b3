"""`tpu-stacks bench --stack S`: measure the stack's own server with inference-perf and write a GIQ profile.

A stack's `slo` is sized from evidence: a GKE Inference Quickstart profile, a published measurement, or the traffic
model. bench makes the user's own measurement that evidence: target.py reads the server, its model and its slice
from the stack's offline plan; config.py says what inference-perf is asked to do (the pinned release, every setting
read in its source); job.py builds the hardened Job, its ConfigMap and its NetworkPolicy; run.py creates them,
waits and reads the Job's log; report.py turns inference-perf's per-stage reports into the profile that
`tpu-stacks size --profiles` and `slo.profiles` read (docs/bench.md).
"""
