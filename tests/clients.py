"""The clients' range test specs give a load-balanced server: an internal load balancer that names none would answer
the whole VPC and is refused (tpu_stacks.serving.exposure.require_clients). The default network's us-central1 subnet, as
in the shipped stacks."""

CLIENTS = ["10.128.0.0/20"]
