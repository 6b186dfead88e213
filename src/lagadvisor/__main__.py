"""``python -m lagadvisor``."""

from .cli import main

main()
