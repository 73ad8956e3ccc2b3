"""Entry point the Pulumi CLI runs (`python policies`): serve the pack over gRPC.

Constructing a PolicyPack starts the analyzer server and blocks, so the policies live in the
importable `tpu_policies` package and this file only hands them to the SDK.
"""

from pulumi_policy import PolicyPack

from tpu_policies import DESCRIPTION, PACK_NAME, POLICIES

PolicyPack(name=PACK_NAME, policies=POLICIES, description=DESCRIPTION)
