"""The expenses of the games of chance: recorded by the member in charge, shown on the GC-7."""
