"""Dynamics engine over bridge's own batched Featherstone algorithms, in any velocity representation.

The neutral model becomes :func:`to_featherstone` (compiled once); a neutral state in the engine's
representation becomes Featherstone's generalized velocity ``nu_F = P T nu`` (base spatial velocity
in world coordinates, angular first; joints in body order; see :mod:`.state`), and every quantity
comes back through the same change of variables (iDynTree's semantics: generalized accelerations
are derivatives of nu in the representation):

* ``M = T^T P^T H_F P T`` (H_F by the CRBA);
* ``h = T^T P^T ID_F(q, nu_F, P T_dot nu)``, ``g = T^T P^T ID_F(q, 0, 0)`` (RNEA);
* ``tau = T^T P^T ID_F(q, nu_F, P (T nu_dot + T_dot nu), f_ext)``;
* ``nu_dot = T^-1 (P^T ABA_F(q, nu_F, P T^-T tau, f_ext) - T_dot nu)``;
* the centroidal momentum matrix from the subtree momenta of the motion subspaces; ``C nu`` by
  the RNEA without gravity; the Coriolis matrix and relative quantities are the generic ones
  (:mod:`bridge.backends.generic`);
* frame quantities from the world-coordinate body velocities, Jacobians and accelerations,
  converted to F (BODY), A (INERTIAL) or F[A] (MIXED); the MIXED acceleration is the derivative of
  the mixed velocity, i.e. the classical acceleration ``(p_ddot, omega_dot)``.

External wrenches ``{frame: w}`` (in the representation's frame for F) become world-coordinate forces
on the frame's body, as the algorithms take them (``ID(a, f) = ID(a) - J^T f``). A fixed base is
the fixed world of the Featherstone model placed at ``world_H_base``: gravity enters in base
coordinates and frames are reported in the world; mass welded to the base counts in the centre of
mass.

Every state may be batched: all arrays keep the batch as their last axis internally, and no Python
loop runs over samples. A batch of more than :data:`~.workspace.CHUNK` states is processed in
chunks of at most ``CHUNK + 1`` states (:func:`~.workspace.padded_width`), each query running the
kernels and the change of variables chunk by chunk on the engine's reusable work arrays and writing
into its result: the memory a query needs beyond its result stays that of one chunk, whatever the
batch size (the result of every query is recomputed from the joint data of each chunk). On the
compiled path the mass matrix of such a batch (and of any batch run in parallel) is one launch over
the flat state instead (:func:`.compiled.mass_matrix`: joint data, CRBA and ``T^T H T`` state by
state, T packed from the conventions' declarations by :func:`.compiled.packed_change`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
from bridge.conventions.frames import frame_acceleration, frame_force, frame_jacobian, frame_motion
from bridge.conventions.state import Representation, State
from bridge.model.model import Model
from bridge.spatial import Transform, cross, vee

from . import compiled
from .batch_math import inertia_apply
from .joints import Joints
from .kernels import aba, accelerations, composite, crba, rnea, subtree_momenta, velocities
from .model import to_featherstone
from .state import FEATHERSTONE
from .workspace import CHUNK, Workspace, padded_width

__all__ = ["FeatherstoneEngine"]


def _padding(n: int) -> int:
    """Padding rows of a batch of n states (copies of the first, dropped from every output): an even
    batch of 64 to CHUNK states runs as one more state. A larger one runs as chunks of an odd width
    (work-array rows of an odd length; see workspace.padded_width), the last one padded by
    :func:`_rows` (the flat batch itself is not: its arrays may then be views of the state's)."""
    if n > CHUNK:
        return 0
    return 1 if n >= 64 and n % 2 == 0 else 0


def _rows(x: object, sl: slice) -> object:
    """The rows ``sl`` of a flat per-state input: an array (n, ...), a dict of them, or None; rows
    past the end (the last chunk's padding) are copies of the first."""
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _rows(v, sl) for k, v in x.items()}
    n = x.shape[0]
    if sl.stop <= n:
        return x[sl]
    return np.concatenate([x[sl.start :], np.broadcast_to(x[:1], (sl.stop - n, *x.shape[1:]))])


def _new_result(shape: tuple[int, ...]) -> np.ndarray:
    """A new float64 result of a chunked query, its pages written once (zeros) in one pass before
    the chunks write it (the compiled CRBA of each chunk from its threads, when the one-launch mass
    matrix of :func:`.compiled.mass_matrix` does not run): the first touch of a large output's fresh
    pages, taken concurrently by two threads chunk after chunk, measured 2 to 3 times slower (the
    first mass matrices of 100,000 iCub states: 56 to 70 µs per state against 30 to 36 with this
    pass, which costs about 0.8 µs per state on pages touched before)."""
    out = np.empty(shape)
    out.fill(0.0)
    return out


#: the frame representation of the algorithms' world-coordinate motions (A, angular first)
_WORLD = FEATHERSTONE.velocity


def _poses(E: np.ndarray, o: np.ndarray) -> np.ndarray:
    """``world_H_frame`` (N, 4, 4) from frame_R_world ``E`` (3, 3, N) and the origin ``o`` (3, N)."""
    out = np.zeros((o.shape[-1], 4, 4))
    out[:, :3, :3] = np.transpose(E, (2, 1, 0))
    out[:, :3, 3] = o.T
    out[:, 3, 3] = 1.0
    return out


class FeatherstoneEngine(EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.KinDyn`) on bridge's batched
    Featherstone kernels (:mod:`bridge.backends.featherstone.kernels`)."""

    name = "featherstone"
    #: derived quantities of the batched kernels (the others are :mod:`bridge.backends.generic`'s)
    NATIVE_QUANTITIES = frozenset({"centroidal_momentum_matrix", "coriolis_forces"})

    def __new__(cls, model: Model, representation: Representation):
        """A model with a planar, ball or free joint goes to :class:`~.general_engine.GeneralEngine`
        (the compiled, level-ordered kernels here take one-coordinate joints only)."""
        if cls is FeatherstoneEngine and not getattr(model, "single_coordinate", True):
            from .general_engine import GeneralEngine

            return GeneralEngine(model, representation)
        return super().__new__(cls)

    def __init__(self, model: Model, representation: Representation) -> None:
        super().__init__(model, representation)
        self.convention = NEUTRAL[self.representation]
        self.fmodel = to_featherstone(model)
        self.tree = Workspace.of(self.fmodel, model.floating).tree  # compiled once per model
        # the engine's own work arrays: its joint data keeps them from set_state to the queries
        self.workspace = Workspace(self.tree)
        tree = self.tree
        first = tree.first_body
        # frame -> (internal body or -1 for the fixed world, frame_R_body (3, 3), origin in body (3,))
        self._frames: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        for name, (body, pose) in self.fmodel.placements.items():
            i = -1 if body == 0 else body - first
            self._frames[name] = (i, np.ascontiguousarray(pose.rotation.T), np.array(pose.translation))
        self._total_mass = float(model.total_mass)
        # joint armature in the tree's velocity order (None without any): the kernels add it
        self._armature = None
        if model.has_armature:
            arm = model.armature[self.fmodel.dof_perm]
            self._armature = np.concatenate([np.zeros(6), arm]) if model.floating else arm
        bI = self.fmodel.base_inertia
        self._base_mass = float(np.trace(bI[3:, 3:]) / 3.0)
        hx = bI[:3, 3:]
        self._base_h = vee(hx)
        self._fperm = np.asarray(self.fmodel.dof_perm, dtype=np.int64)
        self._packed: tuple[np.ndarray, np.ndarray] | bool | None = None  # see _packed_change

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        fb = self._flat = FlatBatch(state, gravity, pad=_padding)
        self.batch_shape, self._n = fb.batch_shape, fb.n
        self._state = state
        self._results: dict[str, np.ndarray] = {}
        self._loaded: tuple[int, int] | None = None
        if fb.n > CHUNK:  # chunks of an odd width, loaded by each query in turn
            rows, w = padded_width(fb.n)
            self._chunks: list[slice] | None = [slice(a, a + w) for a in range(0, rows, w)]
        else:
            self._chunks = None
            self._load(slice(0, fb.rows))

    def _load(self, sl: slice) -> None:
        """Make the rows ``sl`` of the flat batch the current states of the kernels: the change of
        variables, Featherstone's velocities and the joint data (:class:`Joints`) of that chunk."""
        if self._loaded == (sl.start, sl.stop):
            return
        model = self.model
        fb = self._flat
        Hf, s, sd, vb, g = (_rows(x, sl) for x in (fb.H, fb.s, fb.s_dot, fb.base_velocity, fb.gravity))
        N = self._N = Hf.shape[0]
        flat = State(Transform(Hf, check=False), s, vb, sd, self._state.representation, check=False)
        if flat.representation is not self.representation:
            flat = flat.to(self.representation)
        ft = self._ft = change_of_variables(model, flat, self.convention, FEATHERSTONE)
        self._nu = ft.nu  # (N, nv) neutral
        qF = np.ascontiguousarray(s[:, self.fmodel.dof_perm].T)
        R = Hf[:, :3, :3]
        E0 = np.ascontiguousarray(np.transpose(R, (2, 1, 0)))  # (3, 3, N): E0[i, j] = R[j, i]
        r0 = np.ascontiguousarray(Hf[:, :3, 3].T)
        # work arrays are reused from one state (or chunk) to the next, for at most one chunk of
        # states (a KinDyn does not hold on to hundreds of MB after one huge batch)
        arena = self.workspace.arena if self._chunks is not None else self.workspace.arena_for(N)
        self._J = Joints(self.tree, qF, E0, r0, arena=arena)
        gT = np.ascontiguousarray(g.T)  # (3, N)
        self._a0w = np.concatenate([np.zeros((3, N)), -gT])  # world's acceleration, world coordinates
        if model.floating:
            self._a0_rnea = self._a0w
        else:  # the Featherstone world is the base link: gravity in base coordinates
            self._a0_rnea = np.concatenate([np.zeros((3, N)), -np.einsum("ijn,jn->in", E0, gT)])
        self._cache: dict[str, object] = {}
        self._loaded = (sl.start, sl.stop)

    def _query(
        self, fn: Callable[..., np.ndarray], *inputs: object, tail: tuple[int, ...] | None = None
    ) -> np.ndarray:
        """``fn(*inputs)`` on every chunk (or on the whole batch when it is one chunk), with the
        batch axes of the state: ``fn`` computes the flat (rows, ...) result of the current chunk
        from its rows of the flat per-state ``inputs`` (see :func:`_rows`; anything else is bound
        to ``fn`` beforehand). With ``tail`` (the result's shape per state) ``fn`` also takes
        ``out=``, the rows of the result to write, for every chunk without padding rows."""
        if self._chunks is None:
            return self._out(fn(*inputs))
        n = self._n
        out = None if tail is None else _new_result((n, *tail))
        for sl in self._chunks:
            self._load(sl)
            rows = [_rows(x, sl) for x in inputs]
            stop = min(sl.stop, n)  # padding rows come last
            if tail is not None and stop == sl.stop:
                fn(*rows, out=out[sl])
                continue
            r = fn(*rows)
            if out is None:
                out = np.empty((n, *r.shape[1:]), dtype=r.dtype)
            out[sl.start : stop] = r[: stop - sl.start]
        return out.reshape(*self.batch_shape, *out.shape[1:])

    def _flat_wrenches(self, wrenches: Mapping[str, np.ndarray] | None) -> dict[str, np.ndarray] | None:
        """The frame wrenches as flat (rows, 6) arrays (linear first, the representation's frame)."""
        if not wrenches:
            return None
        return {k: self._flat.flat_view(np.asarray(w, dtype=np.float64), 6) for k, w in wrenches.items()}

    # ------------------------------------------------------------------ shared pieces (cached)
    def _get(self, key: str, fn):
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = fn()
        return value

    @property
    def _nu_F(self) -> np.ndarray:
        """Featherstone's generalized velocities (nv, N) (made on first use: the mass matrix needs
        none)."""
        return self._get("nu_F", lambda: np.ascontiguousarray(self._ft.velocity(self._nu).T))

    @property
    def _Tdnu_F(self) -> np.ndarray:
        """``P T_dot nu`` (nv, N), Featherstone's order (made on first use)."""
        return self._get("Tdnu_F", lambda: np.ascontiguousarray(self._ft.bias_acceleration.T))

    def _S(self) -> np.ndarray:
        """World-coordinate motion subspaces (6, nv, N)."""
        return self._J.subspaces()

    def _inertias(self) -> np.ndarray:
        """World inertias (9, nb, N) (see ``Joints.world_inertias``)."""
        return self._J.world_inertias()

    def _v(self) -> np.ndarray:
        """World-coordinate body velocities (6, nb, N)."""
        return self._get("v", lambda: velocities(self._J, self._nu_F))

    def _out(self, x: np.ndarray) -> np.ndarray:
        """(N, ...) -> (*batch, ...) (padding dropped)."""
        return self._flat.unflatten(x)

    # ------------------------------------------------------------------ frames
    def _frame_pose(self, frame: str) -> tuple[int, np.ndarray, np.ndarray]:
        """``(body, E (3, 3, N), o (3, N))``: frame_R_world and the frame origin in world."""
        key = "pose:" + frame
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        i, Ef, of = self._frames[frame]
        J = self._J
        if i < 0:  # welded to the fixed world (base link of a fixed base)
            Eb, rb = J.E0, J.r0
        else:
            E, r = J.fk()
            Eb, rb = E[i], r[i]
        Ew = np.einsum("ij,jkn->ikn", Ef, Eb)
        ow = rb + np.einsum("jin,j->in", Eb, of)
        out = (i, Ew, ow)
        self._cache[key] = out
        return out

    def _to_rep(self, x: np.ndarray, E: np.ndarray, o: np.ndarray) -> np.ndarray:
        """World-coordinate motions (6, N) or motion columns (6, k, N) (angular first) -> the
        representation at the frame (pose ``E``, ``o``), linear first, same shape
        (:mod:`bridge.conventions.frames`)."""
        H = _poses(E, o)
        if x.ndim == 2:
            return frame_motion(H, x.T, _WORLD, self.representation).T
        J = frame_jacobian(H, np.transpose(x, (2, 0, 1)), _WORLD, self.representation)
        return np.transpose(J, (1, 2, 0))

    def _frame_velocity_world(self, frame: str) -> np.ndarray:
        i = self._frames[frame][0]
        if i < 0:
            return np.zeros((6, self._N))
        return self._v()[:, i]

    # Every public query below runs its private twin (flat (N, ...) results of the current chunk)
    # through _query.
    def frame_transform(self, frame: str) -> np.ndarray:
        return self._query(partial(self._frame_transform, frame))

    def _frame_transform(self, frame: str) -> np.ndarray:
        _, E, o = self._frame_pose(frame)
        return _poses(E, o)

    def frame_velocity(self, frame: str) -> np.ndarray:
        return self._query(partial(self._frame_velocity, frame))

    def _frame_velocity(self, frame: str) -> np.ndarray:
        _, E, o = self._frame_pose(frame)
        v = self._to_rep(self._frame_velocity_world(frame), E, o)
        return np.ascontiguousarray(v.T)

    def _jacobian_world(self, frame: str) -> np.ndarray:
        """(6, nv, N) world Jacobian of the frame's body."""
        tree = self.tree
        i = self._frames[frame][0]
        Jw = np.zeros((6, tree.nv, self._N))
        if i < 0:
            return Jw
        cols = tree.support(i)
        Jw[:, cols] = self._S()[:, cols]
        return Jw

    def frame_jacobian(self, frame: str) -> np.ndarray:
        return self._query(partial(self._frame_jacobian, frame))

    def _frame_jacobian(self, frame: str) -> np.ndarray:
        _, E, o = self._frame_pose(frame)
        J = self._to_rep(self._jacobian_world(frame), E, o)  # (6, nv, N)
        J_F = np.ascontiguousarray(np.transpose(J, (2, 0, 1)))  # (N, 6, nv)
        return self._ft.jacobian_back(J_F)

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        nd = self._flat.flat_view(nu_dot, self.model.nv)
        return self._query(partial(self._frame_acceleration, frame), nd)

    def _frame_acceleration(self, frame: str, nd: np.ndarray) -> np.ndarray:
        nd_F = np.ascontiguousarray(self._ft.acceleration(nd).T)
        return np.ascontiguousarray(self._frame_acc(frame, nd_F).T)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        a = self._results.get("bias_acc:" + frame)
        if a is None:
            a = self._results["bias_acc:" + frame] = self._query(partial(self._frame_bias_acc, frame))
        return a

    def _frame_bias_acc(self, frame: str) -> np.ndarray:
        return np.ascontiguousarray(self._frame_acc(frame, self._Tdnu_F).T)

    def _frame_acc(self, frame: str, nd_F: np.ndarray) -> np.ndarray:
        """Derivative of the frame velocity in the representation (6, N), linear first."""
        i, E, o = self._frame_pose(frame)
        N = self._N
        if i < 0:
            return np.zeros((6, N))
        J = self._J
        a = accelerations(J, self._v(), self._nu_F, nd_F, np.zeros((6, 1)))[:, i]
        v = self._v()[:, i]
        return frame_acceleration(_poses(E, o), v.T, a.T, _WORLD, self.representation).T

    # ------------------------------------------------------------------ wrenches
    def _fext(self, wrenches: Mapping[str, np.ndarray] | None) -> dict[int, np.ndarray] | None:
        """Frame wrenches (N, 6) of the current chunk (linear first, in the representation's frame;
        see :meth:`_flat_wrenches`) -> {internal body: world force (6, N) angular first}."""
        if not wrenches:
            return None
        rep = self.representation
        out: dict[int, np.ndarray] = {}
        for name, w in wrenches.items():
            i, E, o = self._frame_pose(name)
            if i < 0:
                continue  # acts on the fixed world
            fw = np.ascontiguousarray(frame_force(_poses(E, o), w, rep, _WORLD).T)  # (6, N)
            out[i] = out[i] + fw if i in out else fw
        return out

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        nv = self.model.nv
        if self._chunks is not None or self._n >= compiled.PARALLEL_MIN:
            # a batch run in parallel: one compiled launch when there is one
            M = self._mass_matrix_flat()
            if M is not None:
                return M.reshape(*self.batch_shape, nv, nv)
        return self._query(self._mass_matrix, tail=(nv, nv))

    def _mass_matrix_flat(self) -> np.ndarray | None:
        """``T^T H T`` of every state in one compiled launch from the flat batch's poses and joint
        positions (:func:`.compiled.mass_matrix`: no chunks loaded), or None off the compiled path
        or when the change of variables has no packed form."""
        change = self._packed_change()
        if change is None or not compiled.available():
            return None
        fb, n = self._flat, self._n
        return compiled.mass_matrix(self.tree, fb.H[:n], fb.s[:n], self._fperm, self._armature, change)

    def _packed_change(self) -> tuple[np.ndarray, np.ndarray] | None:
        """T from the representation to Featherstone's convention as :func:`.compiled.mass_matrix`
        takes it (:func:`.compiled.packed_change`, made once per engine)."""
        if self._packed is None:
            self._packed = compiled.packed_change(self.model, self.convention) or False
        return self._packed or None

    def _mass_matrix(self, out: np.ndarray | None = None) -> np.ndarray:
        # H_F by the CRBA straight into the rows of the result, changed there in place: state by state
        # within the compiled CRBA (while in cache), else after it
        ft, M = self._ft, None
        back = None if ft.identity else ft.kernel_arguments((self._N,))
        if back is not None:
            M = compiled.crba(self._J, out, self._armature, back)  # (None off the compiled path)
        if M is None:
            M = ft.matrix_back(crba(self._J, out=out, armature=self._armature), overwrite=True)
        if out is not None and M is not out:
            np.copyto(out, M)
        return M

    def bias_forces(self) -> np.ndarray:
        return self._query(self._bias_forces)

    def _bias_forces(self) -> np.ndarray:
        tau = rnea(self._J, self._nu_F, self._Tdnu_F, self._a0_rnea)
        return self._ft.force_back(np.ascontiguousarray(tau.T))

    def gravity_forces(self) -> np.ndarray:
        return self._query(self._gravity_forces)

    def _gravity_forces(self) -> np.ndarray:
        tau = rnea(self._J, None, None, self._a0_rnea)
        return self._ft.force_back(np.ascontiguousarray(tau.T))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        nd = self._flat.flat_view(nu_dot, self.model.nv)
        return self._query(self._inverse_dynamics, nd, self._flat_wrenches(wrenches))

    def _inverse_dynamics(self, nd: np.ndarray, wrenches: dict[str, np.ndarray] | None) -> np.ndarray:
        nd_F = np.ascontiguousarray(self._ft.acceleration(nd).T)
        tau = rnea(self._J, self._nu_F, nd_F, self._a0_rnea, self._fext(wrenches), self._armature)
        return self._ft.force_back(np.ascontiguousarray(tau.T))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        t = self._flat.flat_view(tau, self.model.nv)
        return self._query(self._forward_dynamics, t, self._flat_wrenches(wrenches))

    def _forward_dynamics(self, t: np.ndarray, wrenches: dict[str, np.ndarray] | None) -> np.ndarray:
        t_F = np.ascontiguousarray(self._ft.force(t).T)
        # a singular joint-space inertia gives inf/NaN here, which KinDyn reports as a
        # SingularMassMatrixError (no RuntimeWarning on the way)
        with np.errstate(divide="ignore", invalid="ignore"):
            nd_F = aba(self._J, self._nu_F, t_F, self._a0w, self._fext(wrenches), self._armature)
        return self._ft.acceleration_back(np.ascontiguousarray(nd_F.T))

    # ------------------------------------------------------------------ centre of mass
    def _com_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """(sum of m c over the moving bodies (3, N), welded base's m c in world (3, N))."""
        W = self._inertias()
        J = self._J
        base = np.zeros((3, self._N))
        if self._base_mass > 0.0:  # fixed base: E0^T h_b + m r0
            base = np.einsum("jin,j->in", J.E0, self._base_h) + self._base_mass * J.r0
        return W[:3].sum(axis=1), base

    def com_position(self) -> np.ndarray:
        return self._query(self._com_position)

    def _com_position(self) -> np.ndarray:
        moving, base = self._com_parts()
        return np.ascontiguousarray(((moving + base) / self._total_mass).T)

    def _momenta(self) -> np.ndarray:
        """The bodies' spatial momenta (6, nb, N), world coordinates, about the world origin."""
        return self._get("momenta", lambda: inertia_apply(self.tree.mass, self._inertias(), self._v()))

    def com_velocity(self) -> np.ndarray:
        return self._query(self._com_velocity)

    def _com_velocity(self) -> np.ndarray:
        lin = self._momenta()[3:].sum(axis=1) / self._total_mass
        return np.ascontiguousarray(lin.T)

    def centroidal_momentum(self) -> np.ndarray:
        return self._query(self._centroidal_momentum)

    def _centroidal_momentum(self) -> np.ndarray:
        p = self._momenta().sum(axis=1)  # (6, N) about the world origin
        moving, base = self._com_parts()
        c = (moving + base) / self._total_mass  # (3, N)
        out = np.concatenate([p[3:], p[:3] - cross(c, p[3:], axis=0)])  # about the centre of mass
        return np.ascontiguousarray(out.T)

    def com_jacobian(self) -> np.ndarray:
        return self._query(self._com_jacobian)

    def _com_jacobian(self) -> np.ndarray:
        tree = self.tree
        F = subtree_momenta(tree, composite(self._J), self._S())  # (6, nv, N)
        Jc = np.ascontiguousarray(np.transpose(F[3:], (2, 0, 1))) / self._total_mass  # (N, 3, nv)
        return self._ft.jacobian_back(Jc)

    # ------------------------------------------------------------------ derived quantities
    def centroidal_momentum_matrix(self) -> np.ndarray:
        """The subtree momenta of the motion subspaces (world, about the origin) moved to the centre
        of mass: (..., 6, nv), rows in G[A], linear first."""
        return self._query(self._centroidal_momentum_matrix)

    def _centroidal_momentum_matrix(self) -> np.ndarray:
        F = subtree_momenta(self.tree, composite(self._J), self._S())  # (6, nv, N) angular first
        moving, base = self._com_parts()
        c = (moving + base) / self._total_mass  # (3, N)
        k = F[:3] - cross(c[:, None, :], F[3:], axis=0)
        A = np.ascontiguousarray(np.transpose(np.concatenate([F[3:], k]), (2, 0, 1)))  # (N, 6, nv)
        return self._ft.jacobian_back(A)

    def coriolis_forces(self) -> np.ndarray:
        """The RNEA without gravity at zero acceleration in the representation."""
        return self._query(self._coriolis_forces)

    def _coriolis_forces(self) -> np.ndarray:
        tau = rnea(self._J, self._nu_F, self._Tdnu_F, np.zeros((6, self._N)))
        return self._ft.force_back(np.ascontiguousarray(tau.T))
