"""logic layer (see DESIGN.md)."""
