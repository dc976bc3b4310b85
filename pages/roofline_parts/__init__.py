"""The roofline lesson's own parts: its settings (``form``)."""
