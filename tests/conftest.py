"""Test-wide settings.

Under CI (``CI`` set, as ``.ci/run`` is run) hypothesis draws its examples
from a fixed seed, so a run is reproducible and a red CI is a real bug seen
again on the next run; locally it explores new examples each time.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
