"""Train the toy pretrainer with `tfbert.training.train`; options come as one JSON argument.

Prints one JSON line: final step, optimizer iterations, the first moment's
norm, and where the weights were saved. Used by the resume and multi-worker
tests, which need separate processes.
"""

import json
import sys
import time

import keras
import numpy as np

from tfbert.distribute import resolve_strategy
from tfbert.training import train
from toy_pretrainer import ToyPretrainer, toy_dataset_fn


class SlowSteps(keras.callbacks.Callback):
    """Sleep after each step so that a test can kill the run in the middle."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds

    def on_train_batch_end(self, batch, logs=None):
        time.sleep(self.seconds)


def main(options):
    strategy = resolve_strategy(options.get("strategy", "cpu"))
    model = train(
        ToyPretrainer,
        toy_dataset_fn,
        model_dir=options["model_dir"],
        steps=options["steps"],
        global_batch_size=options.get("global_batch_size", 8),
        strategy=strategy,
        checkpoint_every=options["checkpoint_every"],
        optimizer_fn=lambda updates: keras.optimizers.AdamW(1e-2, weight_decay=0.01),
        seed=0,
        verbose=0,
        callbacks=[SlowSteps(options["sleep"])] if options.get("sleep") else [],
    )
    momentum = [v for v in model.optimizer.variables if "momentum" in v.path]
    weights_path = options.get("weights_out")
    if weights_path:
        np.savez(weights_path, *[w.numpy() for w in model.weights])
    print(
        json.dumps(
            {
                "iterations": int(model.optimizer.iterations.numpy()),
                "momentum_norm": float(sum(np.abs(v.numpy()).sum() for v in momentum)),
                "replicas": strategy.num_replicas_in_sync,
            }
        )
    )


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
