"""`slo:` in a serving section (vLLM, JetStream): a traffic target the stack is sized for.

`spec` is what the user writes (one `SloSpec` for every serving engine); `plan` evaluates the stack's
slice with the traffic model (`tpu_stacks.traffic`) and decides the replicas, or refuses the target in
one line. Pure: no provider SDK.
"""
