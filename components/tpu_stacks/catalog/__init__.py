"""Typed catalogues: TPU generations (`tpu`) and model architectures (`models`)."""
