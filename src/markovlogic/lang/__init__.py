"""lang layer (see DESIGN.md)."""
