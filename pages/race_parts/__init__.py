"""The draft race page's own parts: its run (``run``) and its results view (``view``)."""
