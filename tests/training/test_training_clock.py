"""TrainingClock: time to the first step and the steps/s after it, as every training command prints them."""

from __future__ import annotations

from tfbert.training.progress import TrainingClock, process_age


def test_clock_counts_steps_per_call_and_leaves_the_first_step_out_of_the_rate():
    clock = TrainingClock()
    assert clock.summary() == "no training step was made"
    clock.on_epoch_begin(0)
    for end_step in (1, 3, 5):   # steps_per_execution=2: one call per two steps, batch = last step's index
        clock.on_train_batch_begin(end_step)
        clock.on_train_batch_end(end_step)
    clock.on_epoch_begin(1)
    clock.on_train_batch_begin(1)
    clock.on_train_batch_end(1)
    assert clock.steps == 8
    assert 0 < clock.first_step_seconds
    assert clock.summary().startswith(f"time to first step {clock.first_step_seconds:.1f} s; ")
    assert clock.summary().endswith("steps/s over the 7 steps after it")


def test_first_step_is_timed_from_the_process_start():
    clock = TrainingClock()
    clock.on_epoch_begin(0)
    clock.on_train_batch_begin(0)
    clock.on_train_batch_end(0)
    assert clock.first_step_seconds >= process_age() - 1.0 > 0
    assert clock.summary() == f"time to first step {clock.first_step_seconds:.1f} s"
