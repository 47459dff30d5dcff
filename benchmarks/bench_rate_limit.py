"""How close `agentkit eval`'s adaptive concurrency gets to a server's rate limit.

A local OpenAI-compatible server (loopback, this process) admits requests at a fixed rate --
a token bucket of `--rate` requests per second, holding at most `--burst` -- and answers each
admitted request after `--latency` seconds; a request beyond the rate gets HTTP 429 with
`Retry-After` (and `retry-after-ms`). Worker threads then call it for `--seconds` through the
same path an evaluation's samples take: `agentkit.llms.openai.OpenAI` (`max_retries=0`) inside
`agentkit.eval.LiveModel`, sharing one `AdaptiveConcurrency` limiter.

Printed: goodput (answered requests per second) as a share of the rate limit, over the whole
run and after the first `--warmup` seconds, the 429s per minute, and how the limit moved.

With `--queueing` the server is a local model's instead (llama.cpp with `--slots` slots): it
serves `--slots` requests at a time, `--latency` seconds each, queues the rest and never
answers 429. Printed: the most requests in the server at once, the answers' latencies, the
calls that timed out (`--timeout`) and how the limit moved.

    python benchmarks/bench_rate_limit.py                      # 20 req/s, 0.5 s each, 60 s
    python benchmarks/bench_rate_limit.py --seconds 5 --quick  # smoke test
    python benchmarks/bench_rate_limit.py --queueing --slots 1 --latency 1 --start 2 --workers 64
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, TextIO

from agentkit.eval import AdaptiveConcurrency, Budget, LiveModel, StoppedError
from agentkit.llms.errors import APITimeoutError, LLMError
from agentkit.llms.openai import OpenAI
from agentkit.llms.types import ChatMessage

TARGET_GOODPUT = 0.98
"""The share of the rate limit a live evaluation must hold (answered requests per second over
the limit, the whole run)."""


class RateLimitedServer:
    """A chat-completions endpoint on 127.0.0.1 that admits ``rate`` requests per second
    (token bucket of ``burst``) and answers each after ``latency`` seconds; with ``slots``, it
    admits every request instead and serves ``slots`` at a time, the rest waiting in line (a
    local model's server)."""

    def __init__(self, rate: float, burst: float, latency: float,
                 slots: int | None = None) -> None:
        self.rate, self.burst, self.latency = rate, burst, latency
        self.tokens = burst
        self.stamp = time.monotonic()
        self.lock = threading.Lock()
        self.slots = threading.Semaphore(slots) if slots else None
        self.inside = 0  # requests the server holds: served or waiting
        self.most_inside = 0
        self.answered: list[float] = []
        self.refused: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if server.slots is not None:
                    server.serve_in_turn()
                else:
                    wait = server.admit()
                    if wait is not None:
                        body = json.dumps({"error": {"message": "rate limit", "type": "rate"}})
                        self._send(429, body, {"retry-after-ms": f"{wait * 1000:.0f}",
                                               "retry-after": str(math.ceil(wait))})
                        return
                    time.sleep(server.latency)
                server.answered.append(time.monotonic())
                self._send(200, json.dumps({
                    "id": "bench", "object": "chat.completion", "created": 0, "model": "bench",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "ok"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}))

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up waiting (its timeout): nothing to answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def serve_in_turn(self) -> None:
        """Wait for a slot, then take ``latency`` seconds over the answer."""
        assert self.slots is not None
        with self.lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        with self.slots:
            time.sleep(self.latency)
        with self.lock:
            self.inside -= 1

    def admit(self) -> float | None:
        """None when the request is admitted, else the seconds until it would be."""
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                return None
            self.refused.append(now)
            return (1 - self.tokens) / self.rate

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _worker(url: str, limiter: AdaptiveConcurrency, budget: Budget, stop: threading.Event,
            errors: list[str], timeout: float = 30.0,
            latencies: list[float] | None = None) -> None:
    model = LiveModel(OpenAI(model="bench", base_url=url, max_retries=0, timeout=timeout),
                      limiter, budget, stop=stop, retries=20)
    message = [ChatMessage(role="user", content="hi")]
    while not stop.is_set():
        sent = time.monotonic()
        try:
            model.chat(message)
        except StoppedError:
            return
        except LLMError as exc:  # a call that gave up: say so, keep going
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        if latencies is not None:
            latencies.append(time.monotonic() - sent)


def _warm(url: str) -> None:
    """One call before the clock starts: the openai SDK builds its resources and response
    models on a process's first call (seconds on a loaded machine), which is start-up, not
    what the run measures."""
    OpenAI(model="bench", base_url=url, max_retries=5).chat([ChatMessage(role="user",
                                                                          content="hi")])


def run_queueing(slots: int, latency: float, seconds: float, workers: int, start: int,
                 timeout: float, out: TextIO) -> dict[str, float]:
    """Drive a server that queues (``slots`` at a time) for ``seconds``; print and return the
    figures."""
    limiter = AdaptiveConcurrency(start, maximum=workers)
    budget, stop, errors, latencies = Budget(), threading.Event(), [], []
    with RateLimitedServer(0.0, 0.0, latency, slots=slots) as server:
        _warm(server.url)
        began = time.monotonic()
        threads = [threading.Thread(target=_worker, daemon=True,
                                    args=(server.url, limiter, budget, stop, errors, timeout,
                                          latencies))
                   for _ in range(workers)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=timeout + 5)
    ordered = sorted(latencies) or [0.0]
    timed_out = sum(error.startswith(f"{APITimeoutError.__name__}:") for error in errors)
    answered = sum(began <= t <= began + seconds for t in server.answered)
    figures = {
        "answered": float(answered), "most_inside": float(server.most_inside),
        "median_latency": ordered[len(ordered) // 2], "max_latency": ordered[-1],
        "timed_out": float(timed_out), "gave_up": float(len(errors)),
        "final_limit": float(limiter.limit),
        "goodput": answered * latency / slots / seconds,
    }
    print(f"server: {slots} slot(s), {latency:g} s per answer, the rest queued (never a 429)",
          file=out)
    print(f"client: {workers} workers, start {start} in flight (growth allowed to {workers}), "
          f"timeout {timeout:g} s, {seconds:g} s", file=out)
    print(f"in the server at once: at most {server.most_inside}; answers in the {seconds:g} s: "
          f"{answered} ({figures['goodput']:.0%} of the server's capacity), calls took (with the wait "
          f"for a slot of the limiter) median {figures['median_latency']:.2f} s, max "
          f"{figures['max_latency']:.2f} s; timed out: "
          f"{timed_out}, other failures: {len(errors) - timed_out}", file=out)
    moves = ", ".join(f"{c.at:.0f}s {c.old}->{c.new} ({c.reason})" for c in limiter.history)
    print(f"limit: {moves or 'unchanged'}; {limiter.limit} at the end", file=out)
    return figures


def run(rate: float, burst: float, latency: float, seconds: float, warmup: float,
        workers: int, start: int, cooldown: float, out: TextIO) -> dict[str, float]:
    """Drive the server for ``seconds`` and print (and return) the figures."""
    limiter = AdaptiveConcurrency(start, maximum=workers, cooldown=cooldown)
    budget, stop, errors = Budget(), threading.Event(), []
    with RateLimitedServer(rate, burst, latency) as server:
        _warm(server.url)
        began = time.monotonic()
        threads = [threading.Thread(target=_worker, daemon=True,
                                    args=(server.url, limiter, budget, stop, errors))
                   for _ in range(workers)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=latency + 5)
    ended = began + seconds
    answered = [t - began for t in server.answered if began <= t <= ended]
    refused = [t - began for t in server.refused if began <= t <= ended]
    steady = seconds - warmup
    figures = {
        "goodput": len(answered) / seconds / rate,
        "steady_goodput": sum(t >= warmup for t in answered) / steady / rate if steady > 0
        else 0.0,
        "429_per_minute": len(refused) / seconds * 60,
        "steady_429_per_minute": (sum(t >= warmup for t in refused) / steady * 60
                                  if steady > 0 else 0.0),
        "answered": float(len(answered)), "refused": float(len(refused)),
        "episodes": float(limiter.episodes), "final_limit": float(limiter.limit),
        "gave_up": float(len(errors)),
    }
    ideal = rate * latency
    print(f"server: {rate:g} requests/s (burst {burst:g}), {latency:g} s per answer: "
          f"{ideal:g} requests in flight saturate it", file=out)
    print(f"client: {workers} workers, start {start} in flight, cooldown {cooldown:g} s, "
          f"{seconds:g} s", file=out)
    print(f"goodput: {figures['goodput']:.1%} of the limit over {seconds:g} s "
          f"({len(answered)} answers), {figures['steady_goodput']:.1%} after the first "
          f"{warmup:g} s", file=out)
    print(f"429s: {figures['429_per_minute']:.1f} per minute over the run, "
          f"{figures['steady_429_per_minute']:.1f} per minute after the first {warmup:g} s "
          f"({int(figures['refused'])} in all, {limiter.episodes} episodes); calls that gave "
          f"up: {len(errors)}", file=out)
    moves = ", ".join(f"{c.at:.0f}s {c.old}->{c.new} ({c.reason})" for c in limiter.history)
    print(f"limit: {moves or 'unchanged'}; {limiter.limit} at the end", file=out)
    return figures


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second")
    parser.add_argument("--burst", type=float, default=20.0, help="token bucket size")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per answer")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--workers", type=int, default=40)
    parser.add_argument("--start", type=int, default=20, help="requests in flight to start")
    parser.add_argument("--cooldown", type=float, default=15.0)
    parser.add_argument("--quick", action="store_true", help="smoke test: a short, light run")
    parser.add_argument("--queueing", action="store_true",
                        help="a server that queues instead of answering 429 (a local model)")
    parser.add_argument("--slots", type=int, default=1,
                        help="with --queueing: requests the server serves at once")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="with --queueing: seconds a call may take")
    args = parser.parse_args(argv)
    if args.queueing:
        return run_queueing(args.slots, args.latency, args.seconds, args.workers, args.start,
                            args.timeout, out)
    if args.quick:
        args.rate, args.burst, args.latency, args.workers, args.start = 20.0, 5.0, 0.1, 4, 2
        args.warmup = min(args.warmup, args.seconds / 2)
    return run(args.rate, args.burst, args.latency, args.seconds, args.warmup, args.workers,
               args.start, args.cooldown, out)


def measured(figures: dict[str, float]) -> list[Any]:
    """The run's figure for the targets table (``targets.py``)."""
    from _measure import Measured

    return [Measured("rate_limit_goodput", f"{figures['goodput']:.1%} ("
                     f"{figures['steady_goodput']:.1%} after the warm-up)",
                     figures["goodput"] >= TARGET_GOODPUT)]


if __name__ == "__main__":
    figures = main()
    # a smoke run's figures are not measurements, and a queueing server has no rate limit
    if not {"--quick", "--queueing"} & set(sys.argv[1:]):
        from targets import publish

        publish(measured(figures))
