"""``python -m serq``: the ``serq`` command.

Python puts the current folder first on ``sys.path`` for ``python -m``; it is taken off again here, before
the plugin host scans ``sys.path`` for plugins or anything else is imported, so that a folder holding a
program (and whatever else someone put beside it: a ``*.dist-info`` naming a ``serq`` entry point, a
module named like a dependency) adds no code to the run. What Python imported before this module runs
(the ``serq`` package and ``pluggy``) is outside its reach; ``python -P -m serq`` or the ``serq`` script
avoid that too (docs/security.md).
"""

import os
import sys

try:
    _here = os.getcwd()
except OSError:  # the current folder was removed: Python put none on sys.path (its first entry is another)
    _here = None
if not sys.flags.safe_path and sys.path and sys.path[0] in ("", _here):
    del sys.path[0]

from .cli import entry  # noqa: E402

entry()
