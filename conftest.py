"""Settings of the whole test suite.

What serQ keeps between runs (serq-frontend's LALR tables and compile cache) goes to a folder made for
this test session and removed after it, never to the user's ``~/.cache``: ``SERQ_CACHE_DIR`` is set
before any test runs, so the commands the tests start in child processes use it too.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_KEY = "SERQ_CACHE_DIR"


def pytest_configure(config):
    folder = tempfile.mkdtemp(prefix="serq-test-cache-")
    config._serq_cache = (folder, os.environ.get(_KEY))
    os.environ[_KEY] = folder


def pytest_unconfigure(config):
    folder, before = getattr(config, "_serq_cache", (None, None))
    if folder is None:
        return
    if before is None:
        os.environ.pop(_KEY, None)
    else:
        os.environ[_KEY] = before
    shutil.rmtree(folder, ignore_errors=True)
