"""SGLang-JAX (github.com/sgl-project/sglang-jax) on a single-host TPU slice: its OpenAI-compatible server in a
Deployment, the image built from the pinned wheel (`image/`), the weights downloaded by the server into the stack's
bucket through GCS FUSE, and a smoke test through the server's /v1/completions.
"""
