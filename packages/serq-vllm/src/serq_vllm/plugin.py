"""serq-vllm as a part of ``serq``: the ``vllm`` commands and the library folder holding vllm.sq."""

from __future__ import annotations

import os

from serq import hookimpl


@hookimpl(optionalhook=True)
def serq_frontend_library_paths():
    # the folder as a string (what str(Path(__file__).parent / "lib") is): the hook is called to key the
    # compile cache on every load of a .sq file, and pathlib's import is about 3 ms of a short command
    from serq.files import path_join, path_str

    return [path_join(os.path.dirname(path_str(__file__)) or ".", "lib")]


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand  # the commands' module is imported when one of them runs

    register(LazyCommand("vllm", "serq_vllm.cli:vllm_group"))
