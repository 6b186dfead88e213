"""The commands behind ``lagadvisor.cli``: one module per command (its options and its wiring
from options to the core to the renderer), the options shared between commands declared once
(:mod:`.options`), and the turning of those options into inputs (:mod:`.common`).

At the CLI's level of the layers: a command may import anything below; nothing below imports a
command."""
