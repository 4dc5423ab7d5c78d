"""Training the learned evaluation (``heka train``): self-play data and a logistic fit.

An optional part of heka, like ``interop/``: it needs numpy (``pip install 'heka[train]'``);
``engine/`` and ``ai/`` stay standard-library only and only *read* the model files it writes
(:mod:`ai.learned`).
"""
