"""The block verification lesson's own parts: its settings (``form``)."""
