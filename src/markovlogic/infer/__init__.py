"""infer layer (see DESIGN.md)."""
