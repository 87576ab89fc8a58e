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
from serq.jsonin import located, read_text

FIELDS = {"jobs": None, "work": None, "servers": 1.0}


def load_jobs(path, options):
    import serq_frontend

    # read as serQ reads a user's text (UTF-8, a size bound; a byte that is not UTF-8 told at its line and
    # column), and a mistake told as a source's is: FILE:LINE:COL, the line quoted, a caret (serq.jsonin.located)
    text = read_text(str(path), "a .jobs file")
    values = dict(FIELDS)
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, eq, value = (x.strip() for x in line.partition("="))
        try:
            if not eq or name not in FIELDS:
                raise ValueError
            values[name] = float(value)
        except ValueError:
            # at the name when it is not a field, else at the value
            at = line.index(name) if not eq or name not in FIELDS or not name else line.index(value, line.index("="))
            raise UserError(located(text, str(path), n, at + 1,
                                    f"expected one of {', '.join(FIELDS)} = a number")) from None
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
