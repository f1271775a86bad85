"""Neutral spatial algebra: transforms, motion/force vectors, inertias, orderings.

6D vectors are linear first. ``A_H_B`` is the pose of B in A; ``A_X_B`` its motion transform.
The small array functions (cross product, ``skew``/``vee``, quaternions, the rotation between two
directions) live in :mod:`bridge.spatial.so3` and are exported here; ``DEFAULT_GRAVITY`` in
:mod:`bridge.spatial.constants`.
"""

from bridge.spatial.constants import DEFAULT_GRAVITY
from bridge.spatial.conventions import (
    Ordering,
    force_transform_matrix,
    motion_transform_matrix,
    plux,
    plxb,
    reorder_matrix,
    to_angular_first,
    to_linear_first,
    transform_from_featherstone,
    transform_from_plux,
    transform_from_plxb,
    transform_from_rbdl,
    transform_from_tds,
    transform_to_featherstone,
    transform_to_plux,
    transform_to_plxb,
    transform_to_rbdl,
    transform_to_tds,
)
from bridge.spatial.inertia import SpatialInertia
from bridge.spatial.so3 import (
    cross,
    matrix_to_quaternion_wxyz,
    matrix_to_quaternion_xyzw,
    quaternion_wxyz_to_matrix,
    quaternion_wxyz_to_xyzw,
    quaternion_xyzw_to_matrix,
    quaternion_xyzw_to_wxyz,
    rotation_between,
    skew,
    vee,
)
from bridge.spatial.transform import Transform
from bridge.spatial.vectors import Force, Motion, crf, crm

__all__ = [
    "DEFAULT_GRAVITY",
    "Force",
    "Motion",
    "Ordering",
    "SpatialInertia",
    "Transform",
    "crf",
    "crm",
    "cross",
    "force_transform_matrix",
    "matrix_to_quaternion_wxyz",
    "matrix_to_quaternion_xyzw",
    "motion_transform_matrix",
    "plux",
    "plxb",
    "quaternion_wxyz_to_matrix",
    "quaternion_wxyz_to_xyzw",
    "quaternion_xyzw_to_matrix",
    "quaternion_xyzw_to_wxyz",
    "reorder_matrix",
    "rotation_between",
    "skew",
    "to_angular_first",
    "to_linear_first",
    "transform_from_featherstone",
    "transform_from_plux",
    "transform_from_plxb",
    "transform_from_rbdl",
    "transform_from_tds",
    "transform_to_featherstone",
    "transform_to_plux",
    "transform_to_plxb",
    "transform_to_rbdl",
    "transform_to_tds",
    "vee",
]
