"""Generated hostile families (stub)."""

FAMILIES: tuple = ()
