"""heka's games inside other frameworks, as optional extras.

Nothing here is imported by ``engine/``, ``ai/`` or ``service/``; each module needs its extra
(``interop.openspiel``: ``pip install heka[openspiel]``). This package itself imports nothing,
so that it can be installed and listed without any extra.
"""
