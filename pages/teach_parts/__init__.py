"""The teaching route page's own parts: the teacher's warm-up of the route's live runs."""
