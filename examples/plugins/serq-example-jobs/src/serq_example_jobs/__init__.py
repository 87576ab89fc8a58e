"""A ``.jobs`` file: ``NAME = NUMBER`` lines giving ``jobs`` (how many arrive at 0), ``work`` (each one's
work) and ``servers`` (default 1); the program is that many jobs on one fifo stage, each observing its
response time. ``serq run queue.jobs``, ``serq check queue.jobs`` and ``serq ir queue.jobs`` load it.

A loader is ``loader(path, options)`` returning a ``serq_ir.Program``, registered by file suffix through
``serq_register_loaders``; ``options.pm`` is the command's plugin manager (here handed to the frontend,
which compiles the program this loader writes).
"""

from __future__ import annotations

from serq import hookimpl
from serq.errors import UserError

FIELDS = {"jobs": None, "work": None, "servers": 1.0}


def load_jobs(path, options):
    import serq_frontend

    values = dict(FIELDS)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, eq, value = (x.strip() for x in line.partition("="))
        try:
            if not eq or name not in FIELDS:
                raise ValueError
            values[name] = float(value)
        except ValueError:
            raise UserError(f"{path}:{n}: expected one of {', '.join(FIELDS)} = a number, not {line!r}") from None
    missing = [k for k, v in values.items() if v is None]
    if missing:
        raise UserError(f"{path}: {', '.join(missing)} not given")
    source = (f"stage server : fifo({values['servers']:g});\n"
              f"workload {{ arrive batch({values['jobs']:g}); }}\n"
              f"session {{ set t0 = now; run server ({values['work']:g}); observe response = now - t0; }}\n"
              "run { horizon inf; }\n")
    return serq_frontend.compile(source=source, pm=options.pm)


@hookimpl
def serq_register_loaders(register):
    register(".jobs", load_jobs)
