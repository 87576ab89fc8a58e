"""serq_frontend.compile, serq_frontend.cache.load, serq_sim.run and serq_sim.api.registries given a ``pm``
that is no plugin manager: a TypeError saying what pm must be (it was an AttributeError, ``'int' object
has no attribute 'hook'``, from deep in the call; serq.plugins.api_plugin_manager)."""

from __future__ import annotations

import pytest
import serq_frontend
import serq_frontend.cache
import serq_sim
import serq_sim.api

pytestmark = pytest.mark.timeout(60)

SRC = "stage s : delay;\nworkload { arrive poisson(1); }\nsession { run s (1); }\nrun { horizon 10; }\n"


@pytest.mark.parametrize("call", ["compile", "load", "run", "registries"])
def test_a_pm_that_is_no_plugin_manager(tmp_path, call):
    f = tmp_path / "p.sq"
    f.write_text(SRC)
    program = serq_frontend.compile(source=SRC)
    calls = {
        "compile": lambda: serq_frontend.compile(source=SRC, pm=3),
        "load": lambda: serq_frontend.cache.load(f, pm=3),
        "run": lambda: serq_sim.run(program, pm=3),
        "registries": lambda: serq_sim.api.registries(3),
    }
    with pytest.raises(TypeError, match=r"^pm must be a plugin manager .*, not int$"):
        calls[call]()
