"""collector_paused: the cyclic collector off inside, back as it was after the last holder, across threads."""

from __future__ import annotations

import gc
import threading

import pytest

from crp_core.support.collector import collector_paused


def test_off_inside_on_after_even_when_the_block_raises():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_nested_blocks_and_decorated_functions_keep_the_outer_pause():
    @collector_paused()
    def inner() -> bool:
        return gc.isenabled()

    with collector_paused():
        assert inner() is False
        assert not gc.isenabled()  # the inner block's end does not turn it back on
    assert gc.isenabled() and inner() is False and gc.isenabled()


def test_a_collector_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_blocks_in_two_threads():
    first_in, second_done = threading.Event(), threading.Event()
    seen = []

    def holder() -> None:
        with collector_paused():
            first_in.set()
            second_done.wait(5)
            seen.append(gc.isenabled())  # still paused though the other thread's block has ended

    t = threading.Thread(target=holder)
    t.start()
    first_in.wait(5)
    with collector_paused():
        pass
    second_done.set()
    t.join(5)
    assert seen == [False] and gc.isenabled()
