"""Names of the loss-cube schema (``docs/cube-schema.md``), kept in one place.

Every other module takes dim, coordinate and block names from here, so that
no function hard-codes them.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "SPLIT",
    "EXAMPLE",
    "MODEL",
    "CONTRAST",
    "CORE_DIMS",
    "UNIT_DIMS",
    "SPLIT_COORDS",
    "INT_SPLIT_COORDS",
    "BLOCKS",
    "IN_TRAIN",
    "GROUP",
    "N_TEST",
    "REQUIRED_ATTRS",
    "GREATER_IS_BETTER",
    "METRIC",
    "SCORE_ATTRS",
    "UNKNOWN_SEED",
    "SCHEMA_VERSION",
    "FIXED_MODELS_DESIGN",
]

SPLIT: Final = "split"
EXAMPLE: Final = "example"
MODEL: Final = "model"
CONTRAST: Final = "contrast"  # replaces `model` in a contrast cube (cvstats.cube.formula)
#: The three trailing dims every cube has, in order.
CORE_DIMS: Final = (SPLIT, EXAMPLE, MODEL)
#: The dims that may stand last: a cube of models' losses, or of contrasts of them.
UNIT_DIMS: Final = (MODEL, CONTRAST)

#: Integer coordinates on the ``split`` dim (besides ``block``); -1 means "not applicable".
INT_SPLIT_COORDS: Final = ("half", "side", "replicate", "repeat", "fold", "n_train")
#: Every coordinate on the ``split`` dim that the schema requires.
SPLIT_COORDS: Final = ("block", *INT_SPLIT_COORDS)

#: The values the ``block`` coordinate may take.
BLOCKS: Final = ("main", "half", "replicate", "5x2", "nested")

#: Optional boolean coordinate ``(*extra, split, example)``: example in the training set.
IN_TRAIN: Final = "in_train"

#: Optional coordinate ``(example,)``: the group (patient, user, document) of every example.
GROUP: Final = "group"

#: Attributes every cube carries.
REQUIRED_ATTRS: Final = ("design", "n", "seed")

#: Int coordinate on the ``split`` dim of a score cube (``cvstats.cube.score``): test size.
N_TEST: Final = "n_test"
#: Attr of a score cube: 1 if a larger score is better (accuracy, ROC AUC), 0 for a loss.
GREATER_IS_BETTER: Final = "greater_is_better"
#: Attr of a score cube: the name of the metric each value is (``"roc_auc"``, ``"mean loss"``).
METRIC: Final = "metric"
#: Attributes a score cube carries besides :data:`REQUIRED_ATTRS`.
SCORE_ATTRS: Final = (GREATER_IS_BETTER, METRIC)

#: Value of the ``seed`` attr when the splits were not drawn by cvstats.
UNKNOWN_SEED: Final = -1

#: ``design`` attr of fixed models' answers (``cvstats.from_evals``): no training set, so
#: ``n_train = 0`` is allowed in this design only.
FIXED_MODELS_DESIGN: Final = "fixed_models"

#: Version of the on-disk schema written by :func:`cvstats.save`.
SCHEMA_VERSION: Final = 1
