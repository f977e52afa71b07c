"""A pretraining run's precision: chosen once, at its start, recorded in its manifest, kept when it resumes.

The training devices decide `"auto"` from the hardware at a run's start (`tfbert.training.backends`) and
the driver records it in the manifest's `provenance.precision`; a run resumed with `"auto"` keeps that policy, so a run that began in bfloat16 goes on in bfloat16
wherever it is resumed. A precision asked for by name wins, and is what the manifest records from then on.

Example:
    >>> choice = kept_precision("auto", "runs/a")  # doctest: +SKIP
    >>> choice.describe()  # doctest: +SKIP
    "precision: float32 (kept from the run's manifest: no bfloat16 instructions on this CPU ...)"
"""

from __future__ import annotations

import json
import logging

import tensorflow as tf

from tfbert.artifacts.manifest import MANIFEST_FILE
from tfbert.distribute.precision import PrecisionChoice, precision_for_devices
from tfbert.outputs import CHECKPOINT_INDEX

KEPT = "kept from the run's manifest: "
POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")

logger = logging.getLogger("tfbert.distribute.precision")   # the logger the commands show on stdout


def recorded_precision(model_dir: str) -> PrecisionChoice | None:
    """The precision `model_dir`'s manifest records, where the run has a checkpoint (local or a bucket); None
    where it has none, or records none a policy could be (the manifest is rewritten at the start anyway)."""
    folder = model_dir.rstrip("/")
    if not tf.io.gfile.exists(f"{folder}/{CHECKPOINT_INDEX}") or not tf.io.gfile.exists(f"{folder}/{MANIFEST_FILE}"):
        return None
    try:
        with tf.io.gfile.GFile(f"{folder}/{MANIFEST_FILE}", "r") as file:
            recorded = ((json.loads(file.read()).get("provenance") or {}).get("precision") or {})
    except (OSError, ValueError, AttributeError, tf.errors.OpError):
        return None
    if not isinstance(recorded, dict) or recorded.get("policy") not in POLICIES:
        return None
    return PrecisionChoice(recorded["policy"], str(recorded.get("reason") or "recorded"))


def kept_precision(requested: str, model_dir: str) -> PrecisionChoice | None:
    """The precision a resumed run in `model_dir` keeps (see the module notes), or None for a run that starts
    (the training devices decide, and the driver records it); logs `precision: POLICY (REASON)` when kept."""
    recorded = recorded_precision(model_dir)
    if recorded is None:
        return None
    if requested == "auto":
        reason = recorded.reason if recorded.reason.startswith(KEPT) else KEPT + recorded.reason
        choice = PrecisionChoice(recorded.policy, reason)
    else:
        choice = precision_for_devices("cpu", requested)   # a name: no hardware involved
        if choice.policy != recorded.policy:
            choice = PrecisionChoice(choice.policy, f"requested; the run trained in {recorded.policy} before")
    logger.info(choice.describe())
    return choice


def precision_record(choice: PrecisionChoice) -> dict[str, str]:
    """The manifest's `provenance.precision` for `choice`."""
    return {"policy": choice.policy, "reason": choice.reason}
