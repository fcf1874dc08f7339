"""Benchmarks that print JSON; not tests."""

# The production topology's gunicorn worker class (--gunicorn-worker).
GUNICORN_WORKER = 'cyborg_lite.api.gunicorn_worker.ConnectionThreadWorker'
