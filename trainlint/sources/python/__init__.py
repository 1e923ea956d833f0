"""The static Python reader of the python format: one walk, literal values, and the tables of
the calls and names it reads (nothing is imported or run)."""
