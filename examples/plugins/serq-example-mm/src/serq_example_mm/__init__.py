"""A library of defs for serQ programs: ``use "mm.sq";`` finds ``lib/mm.sq`` of this package.

``serq_frontend_library_paths`` returns folders searched for a ``use`` after the using file's folder and
``SERQ_PATH``; a library ships its ``.sq`` files as package data and returns their folder.
"""

from __future__ import annotations

from pathlib import Path

from serq import hookimpl


@hookimpl
def serq_frontend_library_paths():
    return [Path(__file__).parent / "lib"]
