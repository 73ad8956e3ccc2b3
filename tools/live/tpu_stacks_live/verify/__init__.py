"""`tpu-stacks verify --stack S`: read-only checks of a deployed stack against what its offline plan assumes, each
answering PASS, FAIL or UNKNOWN with the one change to make (docs/verify-on-a-cluster.md is the runbook).

plan.py reads the stack's assumptions from the planner; readers.py defines what a check may ask (live.py answers
from the real APIs, fixtures.py from recorded synthetic answers); registry.py holds the checks, which the modules
of checks/ register, one group of checks per module.
"""
