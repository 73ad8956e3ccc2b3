"""The tpu-stacks Pulumi program: read the stack's config, build its scenario."""

import pulumi

from stacks.run import run
from tpu_stacks.errors import UserError

try:
    run()
except UserError as error:
    # A user's mistake: one clear line, no traceback (RunError is Pulumi's clean exit).
    raise pulumi.RunError(str(error)) from None
