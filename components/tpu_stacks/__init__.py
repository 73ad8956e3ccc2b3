"""tpu-stacks: Pulumi components for LLM serving and training on GKE with Cloud TPUs."""

__version__ = "0.1.0"
