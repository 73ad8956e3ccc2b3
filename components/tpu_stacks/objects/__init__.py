"""What the program's Kubernetes objects carry, shared with the policy pack: annotation keys, how long `pulumi up`
waits on each kind, and where each kind keeps its pod template.
"""
