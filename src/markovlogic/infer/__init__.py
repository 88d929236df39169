"""infer layer (see DESIGN.md)."""

# An exact MAP solver may need hours to close the last gap on a hard instance;
# by default it stops after this many seconds and reports the best world found
# with its proven bound (pass max_seconds=None explicitly to wait for the proof).
EXACT_DEFAULT_SECONDS = 60.0
