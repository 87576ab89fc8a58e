"""serq-vllm as a part of ``serq``: the ``vllm`` commands and the library folder holding vllm.sq."""

from __future__ import annotations

from pathlib import Path

from serq import hookimpl


@hookimpl(optionalhook=True)
def serq_frontend_library_paths():
    return [Path(__file__).parent / "lib"]


@hookimpl
def serq_register_commands(register):
    from serq.cli import LazyCommand  # the commands' module is imported when one of them runs

    register(LazyCommand("vllm", "serq_vllm.cli:vllm_group"))
