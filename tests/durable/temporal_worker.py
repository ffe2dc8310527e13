"""A worker for tests/durable/temporal_app.py's workflows, run in a subprocess that the test kills.

Usage: python temporal_worker.py TARGET_HOST TASK_QUEUE
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).parent.parent))

from durable.temporal_app import RefundWorkflow, TriageWorkflow, durable, refunds


async def main(target: str, task_queue: str) -> None:
    client = await Client.connect(target, data_converter=pydantic_data_converter)
    # No workflow cache: once this worker dies, its workflows' next tasks go to any worker at once.
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=[TriageWorkflow, RefundWorkflow],
        activities=[*durable.activities, *refunds.activities],
        max_cached_workflows=0,
        build_id="typedagent-tests",
    )
    print("ready", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
