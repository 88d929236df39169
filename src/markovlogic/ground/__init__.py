"""ground layer (see DESIGN.md)."""
