"""A process that used agentkit's sync API exits, and leaves its event loops the way
``asyncio.run`` leaves its own. Each case runs in a subprocess with a timeout, so a process that
would never exit fails the test instead of hanging the suite."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # seconds; the processes take well under one


def _run(code: str) -> subprocess.CompletedProcess[str]:
    # -X dev: asyncio's debug checks, and a loop left unclosed is a ResourceWarning on stderr
    return subprocess.run([sys.executable, "-X", "dev", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT)


def test_a_sync_function_anyio_ran_in_a_worker_thread_lets_the_process_exit():
    # AnyIO stops its (non-daemon) worker thread in a done-callback of the task that ran it
    done = _run("""
        import anyio.to_thread
        from agentkit.core.sim import run_sync
        print(run_sync(anyio.to_thread.run_sync(lambda: 41 + 1)))
    """)

    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr


def test_a_sync_function_anyio_ran_from_another_thread_lets_the_process_exit():
    done = _run("""
        import threading
        import anyio.to_thread
        from agentkit.core.sim import run_sync
        worker = threading.Thread(
            target=lambda: print(run_sync(anyio.to_thread.run_sync(lambda: 41 + 1))))
        worker.start()
        worker.join()
    """)

    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr


def test_at_exit_a_task_left_pending_is_cancelled_and_unwinds():
    done = _run("""
        import asyncio
        from agentkit.core.sim import run_sync

        async def forever():
            try:
                await asyncio.Event().wait()
            finally:
                await asyncio.sleep(1)  # unwinding awaits too (a connection closes)
                print("unwound")

        async def start():
            global task
            task = asyncio.get_running_loop().create_task(forever())
            await asyncio.sleep(0)

        run_sync(start())
        print("exiting")
    """)

    assert (done.returncode, done.stdout) == (0, "exiting\nunwound\n"), done.stderr


def test_at_exit_an_async_generator_driven_part_way_is_closed():
    done = _run("""
        import asyncio
        from agentkit.core.sim import run_sync

        async def chunks():
            try:
                yield "first"
                yield "second"
            finally:
                await asyncio.sleep(1)
                print("closed")

        async def first():  # a stream the loop's code starts and leaves part way
            global stream
            stream = chunks()
            return await stream.__anext__()

        print(run_sync(first()))
    """)

    assert (done.returncode, done.stdout) == (0, "first\nclosed\n"), done.stderr


def test_at_exit_no_loop_is_left_unclosed():
    done = _run("""
        import asyncio, threading
        from agentkit.core.sim import run_sync
        async def nested():  # on a helper thread's loop
            return run_sync(asyncio.sleep(0))

        run_sync(nested())
        worker = threading.Thread(target=run_sync, args=(asyncio.sleep(1),))
        worker.start()
        worker.join()
    """)

    assert done.returncode == 0 and done.stderr == "", done.stderr
