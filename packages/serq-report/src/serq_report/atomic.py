"""Atomic writes, for the reporters: the host's :mod:`serq.files`."""

from serq.files import open_atomic, write_atomic

__all__ = ["open_atomic", "write_atomic"]
