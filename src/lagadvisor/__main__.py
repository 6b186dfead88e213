"""``python -m lagadvisor`` and the ``lagadvisor`` command (``run``): Ctrl-C while the CLI is
still loading (typer, rich, the native core: a few hundred ms) ends with the same one line as
Ctrl-C later, not a traceback of the import."""

import sys


def run() -> None:
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("lagadvisor: interrupted\n")
        raise SystemExit(130) from None
    main()


if __name__ == "__main__":
    run()
