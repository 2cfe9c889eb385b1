"""A celery app that needs no broker, for `make bench`.

celery multi can only start celery workers, so celery's nodes in the
benchmark are workers of this app: the in-memory transport (memory://) and
no result backend, so that nothing outside the worker is needed. Start them
with the solo pool (-P solo) so that each node is one process.
"""
from celery import Celery

app = Celery("benchapp", broker="memory://")
app.conf.update(
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
)


@app.task
def ping():
    return "pong"
