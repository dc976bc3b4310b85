"""The cost and speedup lesson's own parts: its settings (``form``)."""
