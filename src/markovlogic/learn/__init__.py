"""learn layer (see DESIGN.md)."""
