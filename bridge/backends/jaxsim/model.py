"""A bridge Model as a jaxsim model, through SDFormat text.

:func:`to_jaxsim` hands jaxsim the SDFormat text (:func:`bridge.model.sdf_writer.model_to_sdf`) of
:func:`~bridge.backends.jaxsim.state.jaxsim_tree`: jaxsim merges links joined by fixed joints
itself, but its parser drops every massless link before that (and fails on fixed joints without an
axis), so bridge merges them first; and jaxsim's Jacobians take a link frame to be on its joint's
axis (its parser accepts a link posed off its joint frame, its kinematics places the link there,
its motion subspaces do not), so a joint whose axis misses the child's origin moves a link at the
axis origin instead. The merged links and the extra frames become jaxsim frames. What jaxsim
cannot represent raises :class:`bridge.UnsupportedError` (:func:`unsupported`), which leaves the
jaxsim engine out of ``cross_validate`` with the reason as a note:

* a moving body without mass (a massless link between two movable joints): jaxsim's parser drops
  massless links, breaking the tree (a massless base welded to the world, as a fixed-base MJCF
  model's world body, does not move: :func:`~bridge.backends.jaxsim.state.jaxsim_tree` gives it
  :data:`~bridge.backends.jaxsim.state.WELDED_BASE_MASS`);
* joint armature: jaxsim's mass matrix has no rotor inertia;
* a model without joints (jaxsim needs one);
* coupled mimic joints (``mimic="coupled"``).

Importing jaxsim switches JAX to 64-bit floats (``jax_enable_x64``), a process-wide setting: every
JAX computation in the process is then double precision by default.
"""

from __future__ import annotations

from bridge._cache import ModelCache
from bridge.errors import BackendError, BridgeError, UnsupportedError
from bridge.model.joints import require_single_coordinate
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Model
from bridge.model.sdf_writer import sdf_names

from .state import jaxsim_joint_names, jaxsim_tree

__all__ = ["jaxsim_names", "require_jaxsim", "to_jaxsim", "unsupported"]

_MODELS = ModelCache()


def require_jaxsim() -> None:
    """Import jaxsim (64-bit JAX first); BridgeError naming the extra if it is not installed."""
    try:
        import jax

        jax.config.update("jax_enable_x64", True)  # process-wide: every JAX array is float64 by default
        import jaxsim  # noqa: F401
    except ImportError as exc:
        raise BridgeError(
            "the jaxsim engine needs jaxsim, which is not installed "
            f"(pip install 'bridge-dynamics[jaxsim]'): {exc}"
        ) from None


def unsupported(model: Model) -> str | None:
    """Why jaxsim cannot represent ``model`` (None: it can)."""
    if getattr(model, "mimics", ()):
        return "jaxsim has no mimic joints (load with mimic='independent' or 'error')"
    if model.n_dofs == 0:
        return "jaxsim needs at least one movable joint"
    if model.has_armature:
        return "jaxsim's mass matrix has no joint armature (rotor inertia)"
    tree = jaxsim_tree(model)
    welded = None if model.floating else tree.base  # welded to the world: it does not move
    massless = [link.name for link in tree.links if link.mass == 0.0 and link.name != welded]
    if massless:
        return f"jaxsim's parser drops massless links, and these move on their own: {massless}"
    return None


def to_jaxsim(model: Model):
    """The ``jaxsim.api.model.JaxSimModel`` of ``model`` (built once per model; gravity
    ``(0, 0, -9.81)``), its joints checked to be in :func:`jaxsim_joint_names` order."""
    if not isinstance(model, Model):
        raise BackendError(f"to_jaxsim expects a bridge Model, got {type(model).__name__}")
    kept = _MODELS.of(model)
    if "model" in kept:
        return kept["model"]
    require_uncoupled(model, "jaxsim's q and v")
    require_single_coordinate(model, "jaxsim")
    reason = unsupported(model)
    if reason is not None:
        raise UnsupportedError(f"model {model.name!r}: {reason}")
    require_jaxsim()
    from jaxsim.api.model import JaxSimModel

    with _Quiet():
        js_model = JaxSimModel.build_from_model_description(jaxsim_tree(model).to_sdf())
    joints = sdf_names(jaxsim_tree(model))[1]  # jaxsim knows the joints by their SDF names
    declared = tuple(joints[name] for name in jaxsim_joint_names(model))
    if tuple(js_model.joint_names()) != declared:  # pragma: no cover - internal consistency
        raise BackendError(
            f"jaxsim ordered the joints of {model.name!r} as {js_model.joint_names()}, not in the "
            f"declared order {declared}"
        )
    return kept.setdefault("model", js_model)


def jaxsim_names(model: Model) -> tuple[dict[str, int], dict[str, int]]:
    """``(links, frames)``: each frame name of ``model`` as a jaxsim link index (the links of
    ``model.lumped()``) or a jaxsim frame index (the merged links and the extra frames)."""
    js_model = to_jaxsim(model)
    tree_links, _, tree_frames = sdf_names(jaxsim_tree(model))  # bridge's name -> jaxsim's (SDF)
    own = {v: k for k, v in (*tree_links.items(), *tree_frames.items())}
    links = {own.get(name, name): i for i, name in enumerate(js_model.link_names())}
    n = len(links)
    frames = {own.get(name, name): n + i for i, name in enumerate(js_model.frame_names())}
    missing = set(model.frame_names) - set(links) - set(frames)
    if missing:  # pragma: no cover - internal consistency
        raise BackendError(f"jaxsim's model of {model.name!r} has no frames {sorted(missing)}")
    return links, frames


class _Quiet:
    """Silence jaxsim's logger and numpy's warnings while it parses (it hashes joint axes with
    overflowing casts), and SciPy's "Gimbal lock detected" (rod turns poses into roll-pitch-yaw:
    at a pitch of +-90 degrees the angles it picks still give the same rotation)."""

    def __enter__(self) -> None:
        import logging
        import warnings

        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("ignore", message="Gimbal lock detected", category=UserWarning)
        self._logger = logging.getLogger("jaxsim")  # jaxsim.logging.LOGGER_NAME
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)

    def __exit__(self, *exc) -> None:
        self._logger.setLevel(self._level)
        self._warnings.__exit__(*exc)
