"""The ``analyze`` engine: the streaming pass (:mod:`.analyze`, the native one in
:mod:`.native`), ``--jobs`` (:mod:`.parallel`), the result types (:mod:`.results`) and the
``export`` records (:mod:`.records`); :mod:`lagadvisor.report` renders them."""
