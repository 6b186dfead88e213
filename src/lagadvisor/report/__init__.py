"""Reports: the renderers (console, JSON, CSV, HTML) of what :mod:`lagadvisor.analysis` and
:mod:`lagadvisor.advise` compute."""
