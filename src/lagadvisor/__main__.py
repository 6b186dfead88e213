"""``python -m lagadvisor`` and the ``lagadvisor`` command (``run``): Ctrl-C while the CLI is
still loading (typer, rich, the native core: a few hundred ms) ends with the same one line as
Ctrl-C later, not a traceback of the import; so does a Ctrl-C that Python wrapped in another
error or could not raise where it came (:func:`_interrupted`, :func:`_unraisable`)."""

import _thread
import signal
import sys


_in_hook = False


def _late_interrupt(signum, frame) -> None:
    """SIGALRM, armed by :func:`_unraisable`: raise the Ctrl-C that could not be raised where it
    came, now that the hook has returned (still inside it: a millisecond later again)."""
    if _in_hook:
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        return
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    raise KeyboardInterrupt


def _unraisable(args) -> None:
    """``sys.unraisablehook``: a Ctrl-C whose KeyboardInterrupt was raised inside a callback
    Python cannot raise from (a weakref callback of the import system, a ``__del__``) is not
    printed as "Exception ignored ... Traceback" and lost, with the command going on to its end:
    it is raised again a millisecond later, outside the callback and this hook, where the CLI ends
    on its one line (seen once in 100 Ctrl-Cs of ``advise`` at 0.2-0.9 s). Not by marking SIGINT
    again here: Python handles a mark at its next check, which can be inside this hook (then it
    is "Exception ignored in sys.unraisablehook" and lost: seen in CI on a loaded machine).
    Anything else goes to the default hook."""
    global _in_hook
    if isinstance(args.exc_value, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        import threading

        if threading.current_thread() is not threading.main_thread():
            _thread.interrupt_main(signal.SIGINT)  # marks the main thread, which is not in this hook
            return
        _in_hook = True
        try:
            signal.signal(signal.SIGALRM, _late_interrupt)
            signal.setitimer(signal.ITIMER_REAL, 0.001)
        finally:
            _in_hook = False
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
