"""The "One round, inside the model" page's own parts: the drawing of one round (``view``)."""
