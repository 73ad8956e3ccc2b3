"""What every model server shares, decided from its spec: who may reach it, its parallel flags, the Ray Serve
config, how many sequences fit, and the smoke test it ends with.
"""
