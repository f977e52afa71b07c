"""The dtype-policy argument that models record for `get_config`."""

from __future__ import annotations

from typing import Any


def policy_name(policy: Any) -> str | None:
    """A Keras dtype policy as `get_config` records it: None stays None (the global policy when
    loaded), a name as is, a `keras.DTypePolicy` its name.

    Example:
        >>> import keras
        >>> policy_name(keras.DTypePolicy("mixed_bfloat16")), policy_name(None)
        ('mixed_bfloat16', None)
    """
    return policy if policy is None or isinstance(policy, str) else policy.name
