"""`tpu-stacks e2e --stack S`: the end-to-end run a user starts (`make e2e STACK=dev`).

Through Pulumi's Automation API, in order: the offline plan (no cloud: what the run will cost in TPU time, and
whether the stack has a smoke-test Job), `up` (which awaits the stack's own smoke-test Job), `tpu-stacks verify`,
a second `preview` that must propose no change, and `destroy`. Each step's wall time is printed; the first
failure stops the run with its one line and a non-zero exit, and `destroy` is still attempted once `up` has
started (unless `--keep`), so a failed run does not leave TPU slices billing.

Modules, one job each: `budget` (the plan's TPU pools and the chip-hours bound), `failure` (one line out of a
failed Pulumi command), `runner` (the steps, their order and timing), `automation` (the real Automation API stack
and the verify subprocess: the only code that reaches the Pulumi CLI), `cli` (the subcommand).
"""
