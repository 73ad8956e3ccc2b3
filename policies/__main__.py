"""Entry point the Pulumi CLI runs (`python policies`): serve the pack over gRPC.

Constructing a PolicyPack starts the analyzer server and blocks, so the policies live in the
importable `tpu_policies` package and this file only hands them to the SDK.
"""

import gc

# The SDK and the catalogue are long-lived: the cyclic collector would walk them repeatedly while they
# import and find nothing to free. Off while importing; then frozen (never walked again) and back on.
gc.disable()

from pulumi_policy import PolicyPack  # noqa: E402

from tpu_policies import DESCRIPTION, PACK_NAME, POLICIES  # noqa: E402

gc.freeze()
gc.enable()
PolicyPack(name=PACK_NAME, policies=POLICIES, description=DESCRIPTION)
