"""Running an agent: on a background thread (``start``/``stop``) or as an asyncio task (``await run()``).

Both call the agent's ``step()`` whenever something is due and sleep in
between; ``wake()`` (an admission, a condition change) cuts the sleep
short.  Neither touches signals, the garbage collector or the exit path:
stopping is ``stop()`` from any thread, or cancelling the task.
"""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Optional

MAX_SLEEP_S = 3600.0


class Runner:
    """The thread / asyncio driver mixed into :class:`~pynuma.agent.runtime.NodeAgent`."""

    def __init__(self) -> None:
        self._wake_event = threading.Event()
        self._stopping = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._async: Optional[tuple] = None  # (event loop, asyncio.Event) while run() runs
        self._run_lock = threading.Lock()

    @property
    def running(self) -> bool:
        """Whether a background thread or a ``run()`` task drives the agent."""
        return (self._thread is not None and self._thread.is_alive()) or self._async is not None

    def wake(self) -> None:
        """Make the loop step now instead of at the next due time (harmless when no loop runs)."""
        self._wake_event.set()
        pending = self._async
        if pending is not None:
            loop, event = pending
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass  # the loop closed in between: run() is ending anyway

    def _safe_step(self) -> float:
        try:
            return self.step()
        except Exception as err:  # the loop outlives one bad step; the error is kept for the embedder
            self.errors.append((time.time(), "step", f"{type(err).__name__}: {err}"))
            return time.time() + 1.0

    @staticmethod
    def _sleep_for(due: float) -> float:
        return min(max(0.0, due - time.time()), MAX_SLEEP_S)

    # -- thread ---------------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the loop on a background thread until :meth:`stop`."""
        with self._run_lock:
            if self.running:
                raise RuntimeError("the agent is already running")
            self._stopping.clear()
            try:
                self.publisher.open()
            except BaseException:
                self.publisher.close()  # a sink that did open (a server) must not outlive the failed start
                raise
            self._thread = threading.Thread(target=self._thread_main, name=f"pynuma-agent-{self.node_name}",
                                            daemon=True)
            self._thread.start()

    def _thread_main(self) -> None:
        while not self._stopping.is_set():
            self._wake_event.clear()
            due = self._safe_step()
            self._wake_event.wait(self._sleep_for(due))

    def stop(self, timeout: Optional[float] = None) -> None:
        """End the loop (thread or task), close what ``start()`` opened and flush checkpoints."""
        self._stopping.set()
        self.wake()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                raise RuntimeError(f"the agent's thread did not stop within {timeout} s")
            self._thread = None
            self.publisher.close()
        self.flush()

    # -- asyncio --------------------------------------------------------------------------------------
    async def run(self, offload: bool = False) -> None:
        """Drive the agent from the running event loop until :meth:`stop` or cancellation.

        Each step runs in the loop's thread (an eviction cycle over 1,000
        containers takes tens of milliseconds); ``offload=True`` runs it in the
        loop's default executor instead, so the loop never waits on file reads.
        """
        with self._run_lock:
            if self.running:
                raise RuntimeError("the agent is already running")
            self._stopping.clear()
            self._async = (asyncio.get_running_loop(), asyncio.Event())
        event = self._async[1]
        try:
            self.publisher.open()
            loop = asyncio.get_running_loop()
            while not self._stopping.is_set():
                event.clear()
                due = await loop.run_in_executor(None, self._safe_step) if offload else self._safe_step()
                try:
                    await asyncio.wait_for(event.wait(), self._sleep_for(due))
                except asyncio.TimeoutError:
                    pass
        finally:
            self._async = None
            self.publisher.close()
            self.flush()
