"""The Compare page's own parts: its run (a :class:`~pages.common.jobs.Run`)."""
