"""num_workers: how many events one step handles at once, seen on the virtual clock."""

from agentkit.core.sim import asleep, now, run_sync
from agentkit.workflow import Context, Event, StartEvent, StopEvent, Workflow, step


class Job(Event):
    n: int


class Done(Event):
    n: int
    started: float
    finished: float


def _pool(workers: int) -> type[Workflow]:
    class Pool(Workflow):
        @step
        async def begin(self, ctx: Context, ev: StartEvent) -> Job:
            for n in range(3):
                ctx.send_event(Job(n=n))
            return None

        @step(num_workers=workers)
        async def work(self, ev: Job) -> Done:
            started = now()
            await asleep(1)
            return Done(n=ev.n, started=started, finished=now())

        @step
        async def gather(self, ctx: Context, ev: Done) -> StopEvent | None:
            done = ctx.collect_events(ev, [Done] * 3)
            if done is None:
                return None
            return StopEvent(result=[(d.n, d.started, d.finished) for d in done])

    return Pool


def test_three_workers_handle_three_one_second_jobs_in_one_virtual_second():
    assert _pool(3)().run_sync() == [(0, 0.0, 1.0), (1, 0.0, 1.0), (2, 0.0, 1.0)]


def test_one_worker_handles_the_jobs_one_after_another():
    assert _pool(1)().run_sync() == [(0, 0.0, 1.0), (1, 1.0, 2.0), (2, 2.0, 3.0)]


def test_two_workers_overlap_two_jobs_and_queue_the_third():
    assert _pool(2)().run_sync() == [(0, 0.0, 1.0), (1, 0.0, 1.0), (2, 1.0, 2.0)]


def test_concurrent_steps_run_in_the_order_their_events_arrived():
    result = _pool(3)().run_sync()
    assert [n for n, _, _ in result] == [0, 1, 2]


def test_two_runs_of_one_workflow_overlap_on_the_clock():
    async def main():
        wf = _pool(3)()
        first, second = wf.run(), wf.run()
        await first
        await second
        return now()

    assert run_sync(main()) == 1.0
