"""Where the commands write when no path is given: under ``heka-results/`` in the working
directory, which the checkout's ``.gitignore`` covers, so that a default run never
overwrites or adds a tracked file. Replacing a shipped file (a model of ``ai/models/``, a
rating table of ``ai/ladders/``) takes a deliberate ``--ship`` or an explicit path.
"""

from __future__ import annotations

import os

#: The folder of every default output, relative to the working directory.
RESULTS_DIR = "heka-results"


def default_path(name: str) -> str:
    """``heka-results/NAME``."""
    return os.path.join(RESULTS_DIR, name)
