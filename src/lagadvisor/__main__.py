"""``python -m lagadvisor`` and the ``lagadvisor`` command (``run``): Ctrl-C while the CLI is
still loading (typer, rich, the native core: a few hundred ms) ends with the same one line as
Ctrl-C later, not a traceback of the import; so does a Ctrl-C that Python wrapped in another
error or could not raise where it came (:func:`_interrupted`, :func:`_unraisable`)."""

import _thread
import signal
import sys


def _unraisable(args) -> None:
    """``sys.unraisablehook``: a Ctrl-C whose KeyboardInterrupt was raised inside a callback
    Python cannot raise from (a weakref callback of the import system, a ``__del__``) is not
    printed as "Exception ignored ... Traceback" and lost, with the command going on to its end:
    the signal is marked again, and Python raises it at the next check outside the callback,
    where the CLI ends on its one line (seen once in 100 Ctrl-Cs of ``advise`` at 0.2-0.9 s).
    Anything else goes to the default hook."""
    if isinstance(args.exc_value, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        _thread.interrupt_main(signal.SIGINT)  # marks it only (os.kill would raise it here, in the hook)
        return
    sys.__unraisablehook__(args)


def _interrupted(err: BaseException) -> bool:
    """``err`` is a Ctrl-C: a KeyboardInterrupt, or an error it caused (Python wraps one raised
    in a class body's ``__set_name__`` into a RuntimeError: seen once in 120 Ctrl-Cs of
    ``advise`` while it imported networkx)."""
    seen = 0
    while err is not None and seen < 16:
        if isinstance(err, KeyboardInterrupt):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def run() -> None:
    sys.unraisablehook = _unraisable
    try:
        from .cli import main

        main()
    except SystemExit:
        raise
    except BaseException as err:
        if not _interrupted(err):
            raise
        sys.stderr.write("lagadvisor: interrupted\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    run()
