"""The rating tables of the ladder (``ai.ladder``), one per game and player count, written by
``heka arena --ladder``."""
