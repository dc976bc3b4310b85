"""The overlap lesson's own parts: its settings (``form``)."""
