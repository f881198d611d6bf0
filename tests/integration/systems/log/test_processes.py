"""The durable log across real processes: concurrent appends, wake-ups without polling, kill -9."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from samza_nb.systems.log import DurableLog
from tests.eventually import eventually

ROOT = Path(__file__).parents[4]


def python(code: str, *args: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", textwrap.dedent(code), *args], env=env, text=True, **kwargs
    )


WRITER = """
    import sys
    from samza_nb.systems.log import DurableLog
    directory, name, batches = sys.argv[1], sys.argv[2], int(sys.argv[3])
    log = DurableLog(directory)
    log.create_stream("s", 2)
    print("ready", flush=True)
    sys.stdin.readline()  # all writers start appending together
    for b in range(batches):
        if b % 3 == 0:
            for i in range(5):
                log.send("s", f"{name}-{b}-{i}", partition=(b + i) % 2)
        else:
            log.send_batch("s", [(None, f"{name}-{b}-{i}", (b + i) % 2) for i in range(50)])
        if b % 2:
            log.flush()
    log.close()
"""


def test_processes_appending_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    writers = [
        python(WRITER, str(tmp_path), f"w{n}", "200", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for n in range(4)
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    assert [w.wait(60) for w in writers] == [0, 0, 0, 0]
    for writer in writers:
        assert writer.stdout is not None
        writer.stdout.close()
    expected = {f"w{n}-{b}-{i}" for n in range(4) for b in range(200) for i in range(5 if b % 3 == 0 else 50)}
    with DurableLog(tmp_path) as log:
        seen: list[str] = []
        for partition in range(2):
            records = list(log.read("s", partition))
            assert [offset for offset, _, _ in records] == list(range(len(records)))  # dense
            seen += [value.decode() for _, _, value in records]
            authors = [value[:2] for _, _, value in records]
            switches = sum(a != b for a, b in itertools.pairwise(authors))
            assert switches > 3, "the writers did not append at the same time"
            # each writer's records of one partition stay in the order it sent them
            for n in range(4):
                mine = [v.decode() for _, _, v in records if v.decode().startswith(f"w{n}-")]
                order = [tuple(map(int, v.split("-")[1:])) for v in mine]
                assert order == sorted(order)
    assert len(seen) == len(expected) and set(seen) == expected


def test_a_flush_in_another_process_wakes_a_waiting_reader(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as log:
        log.create_stream("s", 1)
        waiter = log.waiter([("s", 0)])
        assert waiter.cross_process
        writer = python(
            """
            import sys
            from samza_nb.systems.log import DurableLog
            with DurableLog(sys.argv[1]) as log:
                sys.stdin.readline()
                log.send("s", b"wake up")
                log.flush()
            """,
            str(tmp_path),
            stdin=subprocess.PIPE,
        )
        try:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.close()
            while log.upcoming("s", 0) == 0:
                # A generous timeout that is never reached: each return is a wake-up by the flush.
                assert waiter.wait(60), "the wait timed out: nothing woke it"
            assert list(log.read("s", 0)) == [(0, None, b"wake up")]
            assert 1 <= waiter.wakeups <= 3
        finally:
            waiter.close()
            assert writer.wait(30) == 0
        assert log.wait("s", 0, 0, timeout=60)  # already there: returns at once


def test_flushed_records_survive_a_writer_killed_with_sigkill(tmp_path: Path) -> None:
    writer = python(
        """
        import sys
        from samza_nb.systems.log import DurableLog
        log = DurableLog(sys.argv[1])
        log.create_stream("s", 1)
        n = 0
        while True:
            log.send_batch("s", [(None, str(n + i).encode(), None) for i in range(100)])
            n += 100
            if n % 1000 == 0:
                log.flush()
                print(n, flush=True)
        """,
        str(tmp_path),
        stdout=subprocess.PIPE,
    )
    flushed = 0
    try:
        assert writer.stdout is not None
        while flushed < 20_000:
            flushed = int(writer.stdout.readline())
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(30)
        if writer.stdout is not None:
            writer.stdout.close()
    with DurableLog(tmp_path) as log:
        records = list(log.read("s", 0))
        # Everything flushed is there; what was appended after the last flush may be too (the process
        # died, not the machine), but always whole and dense.
        assert len(records) >= flushed and len(records) % 100 == 0
        assert [(o, v) for o, _, v in records] == [(i, str(i).encode()) for i in range(len(records))]
        assert log.send("s", b"next") == (0, len(records))


def test_a_waiting_consumer_thread_is_woken_in_process(tmp_path: Path) -> None:
    import threading

    with DurableLog(tmp_path) as log, DurableLog(tmp_path) as writer:
        log.create_stream("s", 1)
        result: list[bool] = []
        thread = threading.Thread(target=lambda: result.append(log.wait("s", 0, 2, timeout=60)))
        thread.start()
        for value in (b"a", b"b", b"c"):
            writer.send("s", value)
            writer.flush()
        thread.join(60)
        assert result == [True]
        eventually(lambda: log.upcoming("s", 0) == 3)
