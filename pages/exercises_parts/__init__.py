"""The exercise sheets page's own parts: its settings (``form``)."""
