"""The commands that meet a live stack: `tpu-stacks verify` (read-only checks of a deployed stack against what
its plan assumes, each answering PASS, FAIL or UNKNOWN with the one change to make) and `tpu-stacks e2e` (up,
smoke test, verify, a quiet second preview, destroy, through Pulumi's Automation API).

A package of its own, beside the library, because only these reach a cluster and Google's APIs: the library and
the offline planner stay free of the Kubernetes and Google client libraries.
"""
