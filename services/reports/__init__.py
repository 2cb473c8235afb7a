"""The regulator's forms of the GC-7 family, built from the projections (docs/FORMS.md)."""
