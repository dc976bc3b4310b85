"""The probability tree lesson's own parts: its settings (``form``)."""
