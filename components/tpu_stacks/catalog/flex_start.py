"""Flex-start and queued provisioning (Dynamic Workload Scheduler): the companion settings GKE documents for a TPU
pool that uses either, and how long a flex-start VM runs. The cluster plan applies them (cluster/capacity.py) and the
policy pack checks them on any pool (tpu-node-pool-shape); the TPU generations that offer queued provisioning are on
their records (catalog/tpu.py).
"""

from __future__ import annotations

# A flex-start pool is created with `--flex-start --enable-autoscaling --num-nodes=0
# --location-policy=ANY --reservation-affinity=none --no-enable-autorepair` ([XPK] capacity.py);
# queued provisioning is "flex-start with queued provisioning": "you have to add the --flex-start and
# --enable-queued-provisioning flags when you create the node pool" (GKE doc "Run a large-scale
# workload with flex-start with queued provisioning", cloud.google.com/kubernetes-engine/docs/how-to/
# provisioningrequest), with the same companions. [CTK] gke-node-pool preconditions agree: flex-start
# needs auto_repair false, no static node count and NO_RESERVATION; queued provisioning needs
# NO_RESERVATION and a total minimum of 0; neither goes with spot.
DWS_RESERVATION_AFFINITY = "NO_RESERVATION"  # --reservation-affinity=none
DWS_LOCATION_POLICY = "ANY"  # --location-policy=ANY
DWS_AUTO_REPAIR = False  # --no-enable-autorepair
DWS_MIN_NODES = 0  # --enable-autoscaling --num-nodes=0: the pool scales from zero
QUEUED_NEEDS_FLEX_START = True  # --flex-start together with --enable-queued-provisioning
QUEUED_NODE_LABEL_VALUE = "true"
"""GKE taints queued nodes but does not label them; pods select `QUEUED_LABEL: "true"`, so the pool
sets the label itself ([CTK] modules/compute/gke-node-pool/main.tf, kubernetes_labels)."""
FLEX_START_MAX_RUN_SECONDS = 7 * 24 * 3600
"""Flex-start VMs run for up to 7 days ([D-GKE-TPU] "TPU consumption")."""
