"""The tree drafts lesson's own parts: its settings (``form``)."""
