"""``open_atomic`` and ``write_atomic`` (``serq.files``, also ``serq_report``'s) check ``perms`` and ``own``
at the call, as they check the path and the inputs: ``perms="644"`` was a TypeError of os.open naming no
parameter (and under ``open_atomic`` only once its block was entered), ``perms=0o4755`` made a set-user-ID
file, ``perms=-1`` an OverflowError, and ``own="no"`` was taken by its truth."""

from __future__ import annotations

import os
import stat

import pytest
from serq.files import open_atomic, write_atomic

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("perms", ["644", 6.44, True, [0o644]])
def test_perms_that_are_not_an_int_are_a_type_error_naming_them(tmp_path, perms):
    for call in (lambda: write_atomic(tmp_path / "a.txt", "x", perms=perms),
                 lambda: open_atomic(tmp_path / "a.txt", perms=perms)):
        with pytest.raises(TypeError, match="perms must be permission bits"):
            call()
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize("perms", [-1, 0o1000, 0o4755, 0o7777777, 2**100])
def test_perms_beyond_the_permission_bits_are_a_value_error(tmp_path, perms):
    with pytest.raises(ValueError, match="perms must be permission bits, an int from 0 to 0o777"):
        write_atomic(tmp_path / "a.txt", "x", perms=perms)
    assert not (tmp_path / "a.txt").exists()


def test_own_that_is_no_bool_is_a_type_error(tmp_path):
    for own in ("no", 0, None):
        with pytest.raises(TypeError, match="own must be True or False"):
            write_atomic(tmp_path / "a.txt", "x", own=own)
        with pytest.raises(TypeError, match="own must be True or False"):
            open_atomic(tmp_path / "a.txt", own=own)


def test_permission_bits_are_given_to_the_file(tmp_path):
    path = tmp_path / "a.txt"
    write_atomic(path, "x", perms=0o640)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert path.read_text() == "x"
