"""The Compare page's own parts: its run (a :class:`~pages.common.service_run.ServiceRun`)."""
