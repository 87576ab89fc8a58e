"""An output whose name is long but within what its folder takes (NAME_MAX, 255 bytes here) is written:
the temporary file it is written to first is named after it with 14 bytes more (``.NAME.xxxxxxxx.tmp``),
so a name of 242 to 255 bytes was refused as 'File name too long' (``serq run p.sq -o NAME``, a records
file, a sweep's table, a compile cache entry), where a shell's ``>`` writes it."""

from __future__ import annotations

import os

import pytest
from serq.files import write_atomic

pytestmark = pytest.mark.timeout(60)


def _name_max(folder) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


@pytest.mark.parametrize("letter", ["c", "é"])  # one byte a character, two
def test_a_name_of_as_many_bytes_as_the_folder_takes_is_written(tmp_path, letter):
    limit = _name_max(tmp_path)
    name = letter * ((limit - 4) // len(letter.encode())) + ".txt"
    assert limit - 1 <= len(name.encode()) <= limit
    with open(tmp_path / name, "w") as f:  # the folder takes such a name: a plain open makes it
        f.write("old")
    write_atomic(tmp_path / name, "new")
    assert (tmp_path / name).read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


def test_a_new_file_of_a_long_name_is_written(tmp_path):
    name = "r" * (_name_max(tmp_path) - 5) + ".json"
    write_atomic(tmp_path / name, "{}")
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert (tmp_path / name).read_text() == "{}"
