"""Imported last by the fork server of a sweep's local pool, as the last module it preloads (serq_sweep.engines).

The pool starts the server ignoring SIGINT, so that a Ctrl-C at the terminal while the server imports the
modules it preloads prints no traceback (engines._start_forkserver_deaf_to_ctrl_c). Past its preload the
server's loop ignores SIGINT itself, and a process it forks takes the handler the server had when its loop
began: this puts back Python's own there, so that the processes the server starts for anyone else in the
same session (a pool of the caller's own, once a sweep started the server) take Ctrl-C as Python's do. A
sweep's workers ignore it in their initializer (serq_sweep.worker.ignore_sigint), as before.

It also unblocks SIGINT, SIGTERM and SIGHUP, which the server takes blocked from the thread that started it
when that is not the sweep's main thread: the pool's thread that starts workers in place of ended ones was
made while the sweep held those signals (engines._signals_held, around the pool's start), and a server it
started again after a SIGTERM to the whole process group (``kill -TERM -PGID``, ``timeout``) had ended the
first one, and the workers that server forked, could then not be ended by SIGTERM: the pool's ending and
Python's exit waited for them for ever (the sweep said ``terminated`` and never exited). Unblocked while
SIGINT is still ignored, a Ctrl-C that came during the preload is dropped, not raised here.
"""

import signal

from serq.signals import HANDLED

if hasattr(signal, "pthread_sigmask"):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(HANDLED))
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
