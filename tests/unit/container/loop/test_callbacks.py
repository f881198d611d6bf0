"""Ports of Samza's TestTaskCallbackManager and TestTaskCallbackImpl scenarios."""

from __future__ import annotations

import threading

import pytest

from samza_nb import RequestScope, SystemStreamPartition
from samza_nb.container.loop.callbacks import TaskCallbackImpl, TaskCallbackManager
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.errors import CallbackError

SSP = SystemStreamPartition("kafka", "topic", 0)


class Listener:
    def __init__(self) -> None:
        self.completed: list[TaskCallbackImpl] = []
        self.failures: list[BaseException] = []
        self.lock = threading.Lock()

    def on_complete(self, callback: TaskCallbackImpl) -> None:
        with self.lock:
            self.completed.append(callback)

    def on_failure(self, callback: TaskCallbackImpl, error: BaseException) -> None:
        with self.lock:
            self.failures.append(error)


def make(seq: int, listener: Listener | None = None, coordinator: ReadableCoordinator | None = None):
    return TaskCallbackImpl(
        listener or Listener(),
        threading.Lock(),
        "Partition 0",
        SSP,
        str(seq),
        seq,
        coordinator or ReadableCoordinator("Partition 0"),
    )


def test_sequence_numbers_count_from_zero() -> None:
    manager = TaskCallbackManager()
    assert [manager.take_seq(), manager.take_seq(), manager.take_seq()] == [0, 1, 2]


def test_in_order_completions_are_released_at_once() -> None:
    manager = TaskCallbackManager()
    first, second = make(manager.take_seq()), make(manager.take_seq())
    assert [cb.offset for cb in manager.update(first)] == ["0"]
    assert [cb.offset for cb in manager.update(second)] == ["1"]


def test_out_of_order_completions_wait_for_the_earlier_ones() -> None:
    manager = TaskCallbackManager()
    callbacks = [make(manager.take_seq()) for _ in range(3)]
    assert manager.update(callbacks[2]) == []
    assert manager.update(callbacks[1]) == []
    assert [cb.offset for cb in manager.update(callbacks[0])] == ["0", "1", "2"]
    assert manager.waiting == 0


def test_release_stops_after_a_commit_request_but_not_after_a_shutdown_request() -> None:
    manager = TaskCallbackManager()
    plain, committing, stopping = (ReadableCoordinator("t") for _ in range(3))
    committing.commit(RequestScope.CURRENT_TASK)
    stopping.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)
    cb0, cb1, cb2 = make(0, coordinator=plain), make(1, coordinator=committing), make(2, coordinator=stopping)
    manager.next_seq = 3
    assert manager.update(cb2) == []
    assert manager.update(cb1) == []
    assert [cb.seq for cb in manager.update(cb0)] == [0, 1]
    assert manager.waiting == 1
    # After the commit ran, the rest is released.
    assert [cb.seq for cb in manager.release_more()] == [2]


def test_release_stops_at_each_commit_request_in_turn() -> None:
    manager = TaskCallbackManager()
    coordinators = [ReadableCoordinator("t") for _ in range(4)]
    coordinators[1].commit(RequestScope.CURRENT_TASK)
    coordinators[2].shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)
    coordinators[3].commit(RequestScope.CURRENT_TASK)
    callbacks = [make(i, coordinator=c) for i, c in enumerate(coordinators)]
    manager.next_seq = 4
    for cb in reversed(callbacks[1:]):
        assert manager.update(cb) == []
    assert [cb.offset for cb in manager.update(callbacks[0])] == ["0", "1"]
    assert [cb.offset for cb in manager.release_more()] == ["2", "3"]


def test_complete_reports_once() -> None:
    listener = Listener()
    callback = make(0, listener)
    callback.complete()
    assert len(listener.completed) == 1 and listener.failures == []
    assert callback.is_done


def test_failure_reports_the_error() -> None:
    listener = Listener()
    error = RuntimeError("boom")
    make(0, listener).failure(error)
    assert listener.completed == [] and listener.failures == [error]


def test_second_complete_is_a_callback_error() -> None:
    listener = Listener()
    callback = make(0, listener)
    callback.complete()
    callback.complete()
    assert len(listener.completed) == 1
    assert len(listener.failures) == 1 and isinstance(listener.failures[0], CallbackError)
    assert "already completed" in str(listener.failures[0])


def test_failure_after_complete_is_a_callback_error() -> None:
    listener = Listener()
    callback = make(0, listener)
    callback.complete()
    callback.failure(RuntimeError("late"))
    assert isinstance(listener.failures[0], CallbackError)
    assert isinstance(listener.failures[0].__cause__, RuntimeError)


def test_complete_after_failure_is_a_callback_error() -> None:
    listener = Listener()
    callback = make(0, listener)
    callback.failure(RuntimeError("first"))
    callback.complete()
    assert listener.completed == []
    assert [type(e) for e in listener.failures] == [RuntimeError, CallbackError]


@pytest.mark.parametrize("attempt", range(20))
def test_racing_completions_from_two_threads_complete_exactly_once(attempt: int) -> None:
    listener = Listener()
    callback = make(0, listener)
    barrier = threading.Barrier(2)

    def finish() -> None:
        barrier.wait()
        callback.complete()

    threads = [threading.Thread(target=finish) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(listener.completed) == 1
    assert len(listener.failures) == 1 and isinstance(listener.failures[0], CallbackError)
