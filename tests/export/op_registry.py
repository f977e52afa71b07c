"""Prints the ops TensorFlow alone registers, then those TF-Text adds (JSON), from a fresh process."""

import json

import tensorflow as tf  # noqa: F401
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.client import pywrap_tf_session


def registered() -> set:
    ops = op_def_pb2.OpList()
    ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(pywrap_tf_session.TF_GetAllOpList()))
    return {op.name for op in ops.op}


core = registered()
import tensorflow_text  # noqa: E402,F401

print(json.dumps({"core": sorted(core), "text": sorted(registered() - core)}))
