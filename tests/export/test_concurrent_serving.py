"""One exported SavedModel called from 8 threads at once answers exactly as it does from one thread."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorflow as tf

from conftest import CONTEXTS, PAIRS, TEXTS, strings

THREADS = 8
# Batches of different sizes and texts, so that concurrent calls differ in shape and content.
BATCHES = [TEXTS[: 1 + index % len(TEXTS)] + CONTEXTS[: index % 3] + PAIRS[index % 2:] for index in range(24)]


def test_eight_threads_on_one_saved_model_equal_one_thread(loaded):
    serve = loaded["classification"].signatures["serving_default"]

    def call(texts):
        outputs = serve(text=tf.constant(strings(texts)), text_pair=tf.constant(strings(texts[::-1])))
        return {name: value.numpy() for name, value in outputs.items()}

    alone = [call(texts) for texts in BATCHES]
    with ThreadPoolExecutor(THREADS) as pool:
        together = list(pool.map(call, BATCHES * 4))   # each batch 4 times, 8 at a time
    for index, outputs in enumerate(together):
        expected = alone[index % len(BATCHES)]
        assert outputs.keys() == expected.keys()
        for name in expected:
            np.testing.assert_array_equal(outputs[name], expected[name], err_msg=f"batch {index}, {name}")
