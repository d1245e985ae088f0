"""``tmakit.bench.timing.time_events`` without a GPU: a fake ``torch`` records what the loop enqueues."""

import sys
import types

from tmakit.bench import timing


def _fake_torch(log):
    class Event:
        n = 0

        def __init__(self, enable_timing=False):
            Event.n += 1
            self.id = Event.n

        def record(self):
            log.append(("record", self.id))

        def elapsed_time(self, end):
            return float(end.id - self.id)

    cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: log.append(("sync",)))
    return types.SimpleNamespace(cuda=cuda)


def test_each_timed_call_follows_a_flush_and_every_set_is_warmed_twice(monkeypatch):
    log = []
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(log))
    flush = types.SimpleNamespace(zero_=lambda: log.append(("flush",)))
    fns = [lambda i, name=name: log.append(("call", name, i)) for name in "ab"]
    times = timing.time_events(fns, 3, flush, 1, 4)
    assert len(times) == 2
    first_timed = next(i for i, e in enumerate(log) if e[0] == "flush")
    for name in "ab":  # warm-up: each input set at least twice per fn, before any timed call
        warm = [e[2] for e in log[:first_timed] if e[:2] == ("call", name)]
        assert all(warm.count(i) >= 2 for i in range(3))
    timed = [i for i, e in enumerate(log) if e[0] == "call" and i > first_timed]
    assert len(timed) == 8
    for i in timed:  # flush, start event, the call, end event
        assert log[i - 2] == ("flush",) and log[i - 1][0] == "record" and log[i + 1][0] == "record"
    order = [log[i][1] for i in timed]
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]  # reversed every other round
