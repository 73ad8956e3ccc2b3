"""Tutorial scenarios composed from tpu-stacks components, driven by typed stack config."""
