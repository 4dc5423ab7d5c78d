"""The learned evaluation's model files (``ai.learned``), one per game and player count,
written by ``heka train``."""
