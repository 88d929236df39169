"""store layer (see DESIGN.md)."""
