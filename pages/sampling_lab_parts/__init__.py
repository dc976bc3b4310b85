"""The sampling lab's own parts: its settings (``form``)."""
