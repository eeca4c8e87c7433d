"""Build the next updates' batches on a background thread (:class:`Prefetcher`), resumably.

The worker calls ``produce()`` up to ``depth`` items ahead of the training loop and records, with each item, the
source's ``state_dict()`` right after producing it. :meth:`Prefetcher.state_dict` is the state after the last
item the loop *consumed*, not after the last one prefetched: a checkpoint written after update ``n`` resumes at
update ``n + 1``'s batches, bit for bit, however far the worker had run ahead.

The worker must not draw from the global RNGs (torch, numpy, ``random``): they are part of the checkpoint and
the training thread owns them. ``depth=0`` produces on the calling thread (no worker).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

State = dict[str, Any]


class Prefetcher(Generic[T]):
    """``next()`` returns the items of ``produce`` in order, built ``depth`` ahead on a daemon thread."""

    def __init__(self, produce: Callable[[], T], state: Callable[[], State], depth: int = 2) -> None:
        self.produce, self.source_state, self.depth = produce, state, depth
        self._queue: queue.Queue[tuple[T, State] | BaseException] = queue.Queue(maxsize=max(depth, 1))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumed: State | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def _work(self) -> None:
        try:
            while not self._stop.is_set():
                item = (self.produce(), self.source_state())
                while not self._stop.is_set():
                    try:
                        self._queue.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        except BaseException as exc:  # handed to the training thread, which raises it
            self._queue.put(exc)

    def next(self) -> T:
        if self.depth == 0:
            item = self.produce()
            self._consumed = self.source_state()
            return item
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="prefetch", daemon=True)
            self._thread.start()
        got = self._queue.get()
        if isinstance(got, BaseException):
            raise got
        item, self._consumed = got
        return item

    def state_dict(self) -> State:
        """The source's state after the last consumed item (before any: the source's own)."""
        return dict(self._consumed) if self._consumed is not None else self.source_state()

    def close(self) -> None:
        """Stop the worker (items already built are dropped)."""
        self._stop.set()
        if self._thread is not None:
            while self._thread.is_alive():
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    self._thread.join(timeout=0.05)
            self._thread = None
