"""A frame store: slider frames (PNG bytes) kept on disk under a hash of everything they depend on.

A slider view's frame is a pure function of its draw function, the data that function reads, the
state, the view's reference state (its layout is frozen there) and the software that turns a Figure
into PNG bytes. ``frame_key`` hashes all of these, so a store filled once (by the site build, by
Binder's post-build step, by a hub image) serves every first press without drawing, and a learner who
edits a cell (new code or new data, so a new key) always gets a fresh render: a stale frame is never
found under a new key.

- ``fingerprint(obj)``: a digest of an object that is the same in every process, or None when the
  object cannot be keyed (then the store is not used for that view).
- ``frame_key(view, values)``: the key of one state of a ``SliderView`` (None when it cannot be keyed).
- ``FrameStore(root)``: PNG files under ``root``, sharded by the key's first two hex digits, written
  atomically. ``default_store()``: the store named by the environment variable ``ATTNLIB_FRAMES``
  (a folder; "off" or unset: no store).

Nothing here runs on import and the module keeps no state of its own.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import importlib.metadata
import os
import pickle
import re
import sys
import tempfile
import types
from pathlib import Path

__all__ = ["FORMAT", "FrameStore", "attnlib_source_hash", "default_store", "fingerprint", "frame_key",
           "view_fingerprint"]

# How a Figure becomes a frame's bytes (attnlib.widgets._png / _encode): change it when that changes.
FORMAT = "attnlib-frame-1: one Agg pass, RGB quantised to 256 colours (Pillow FASTOCTREE), PNG zlib level 6"
ENV = "ATTNLIB_FRAMES"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_HEX_KEY = re.compile(r"[0-9a-f]{64}")
# rcParams that change no pixel of an Agg render (which GUI backend is active, key bindings, ...)
_RC_IGNORED = ("backend", "backend_fallback", "interactive", "toolbar", "timezone", "webagg.", "keymap.",
               "savefig.directory", "animation.", "tk.", "macosx.", "figure.raise_window", "figure.hooks")


_PRIMITIVES = (type(None), bool, int, float, complex, str, bytes)


class _Unkeyable(Exception):
    """The object (or something it reaches) has no stable digest."""


def attnlib_source_hash() -> str:
    """sha256 over attnlib's source files (every .py and .json in the package, by relative path)."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _version_of(top: str) -> str | None:
    """The installed version of top-level module ``top`` (its ``__version__`` or its distribution's)."""
    module = sys.modules.get(top)
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        return importlib.metadata.version(top)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


class _Hasher:
    """Feeds an object graph into one sha256, depth first, with back-references for objects seen before."""

    def __init__(self, source: list):
        self.h = hashlib.sha256()
        self.memo = {}  # id(obj) -> visit index
        self.keep = []  # every memoised object, so no id is reused while hashing
        self.source = source  # [attnlib source hash] once computed, shared with sub-hashers

    # -- helpers -------------------------------------------------------------------------------
    def raw(self, tag: str, data: bytes = b"") -> None:
        self.h.update(tag.encode() + b":" + str(len(data)).encode() + b":" + data + b";")

    def text(self, tag: str, s: str) -> None:
        self.raw(tag, s.encode("utf-8", "surrogatepass"))

    def attnlib(self) -> str:
        if not self.source:
            self.source.append(attnlib_source_hash())
        return self.source[0]

    def sub(self, obj) -> str:
        """The digest of ``obj`` alone (for order-free containers)."""
        other = _Hasher(self.source)
        other.feed(obj)
        return other.h.hexdigest()

    def module_token(self, name: str) -> None:
        """A module counts by name and version (attnlib's by its source hash; a versionless file by its bytes)."""
        top = name.split(".")[0]
        if top == "attnlib":
            self.text("attnlib-module", f"{name}@{self.attnlib()}")
            return
        if top in sys.stdlib_module_names or top == "builtins":
            self.text("stdlib-module", f"{name}@{sys.version}")
            return
        version = _version_of(top)
        if version is not None:
            self.text("module", f"{name}@{version}")
            return
        path = getattr(sys.modules.get(name), "__file__", None)
        if path and os.path.isfile(path):
            self.text("module-file", f"{name}@{hashlib.sha256(Path(path).read_bytes()).hexdigest()}")
            return
        raise _Unkeyable(f"module {name!r} has no version and no source file")

    @staticmethod
    def versioned(module: str | None) -> bool:
        """True if code from ``module`` is covered by a version or a source hash (so its globals need no walk)."""
        if not module or module == "__main__":
            return False
        top = module.split(".")[0]
        return top == "attnlib" or top in sys.stdlib_module_names or top == "builtins" or _version_of(top) is not None

    # -- the walk ------------------------------------------------------------------------------
    def feed(self, obj) -> None:
        if type(obj) in _PRIMITIVES:
            if type(obj) is bytes:
                self.raw("bytes", obj)
            elif type(obj) is str:
                self.text("str", obj)
            else:
                self.text(type(obj).__name__, repr(obj))
            return
        if id(obj) in self.memo:
            self.text("ref", str(self.memo[id(obj)]))
            return
        self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)
        self.walk(obj)

    def walk(self, obj) -> None:  # noqa: C901 - one branch per kind of object
        import numpy as np

        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                self.text("object-array", repr(obj.shape))
                for item in obj.ravel().tolist():
                    self.feed(item)
                return
            self.text("ndarray", f"{obj.dtype.str}{obj.shape}")
            self.h.update(np.ascontiguousarray(obj).view(np.uint8).reshape(-1).data)
            return
        if isinstance(obj, np.generic):
            self.text("npscalar", obj.dtype.str)
            self.raw("value", obj.tobytes())
            return
        if isinstance(obj, (list, tuple)):
            self.text(type(obj).__name__ if type(obj) in (list, tuple) else "seq", str(len(obj)))
            if type(obj) not in (list, tuple):
                self.feed(type(obj))
            for item in obj:
                self.feed(item)
            return
        if isinstance(obj, dict):
            self.text("dict", str(len(obj)))
            if type(obj) is not dict:
                self.feed(type(obj))
            for k, v in list(obj.items()):
                self.feed(k)
                self.feed(v)
            return
        if isinstance(obj, (set, frozenset)):
            self.text(type(obj).__name__, ",".join(sorted(self.sub(item) for item in obj)))
            return
        if isinstance(obj, types.CodeType):
            self.code(obj)
            return
        if isinstance(obj, types.FunctionType):
            self.function(obj)
            return
        if isinstance(obj, types.MethodType):
            self.raw("method")
            self.feed(obj.__func__)
            self.feed(obj.__self__)
            return
        if isinstance(obj, functools.partial):
            self.raw("partial")
            self.feed(obj.func)
            self.feed(obj.args)
            self.feed(obj.keywords)
            return
        if isinstance(obj, types.ModuleType):
            self.module_token(obj.__name__)
            return
        if isinstance(obj, type):
            self.cls(obj)
            return
        if isinstance(obj, (types.BuiltinFunctionType, np.ufunc)):
            owner = getattr(obj, "__module__", None) or getattr(getattr(obj, "__self__", None), "__name__", None)
            self.text("builtin", f"{owner}.{getattr(obj, '__qualname__', obj.__name__)}")
            self.module_token(owner or "builtins")
            return
        if isinstance(obj, types.CellType):
            try:
                contents = obj.cell_contents
            except ValueError:  # an empty cell
                self.raw("empty-cell")
                return
            self.raw("cell")
            self.feed(contents)
            return
        self.pickled(obj)

    def code(self, co: types.CodeType) -> None:
        """What a code object does: bytecode, constants (nested code too), names, argument layout, flags.
        Not its file name or line numbers (a cell run again, or moved, computes the same)."""
        self.raw("code", co.co_code)
        self.text("layout", repr((co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount, co.co_flags,
                                  co.co_names, co.co_varnames, co.co_freevars, co.co_cellvars)))
        self.raw("exceptions", getattr(co, "co_exceptiontable", b""))
        self.text("consts", str(len(co.co_consts)))
        for const in co.co_consts:
            self.feed(const)

    def function(self, f: types.FunctionType) -> None:
        """Code, defaults, closure contents and the globals it reads (walked unless versioned code covers them)."""
        self.text("function", f"{f.__module__}")
        self.feed(f.__code__)
        self.feed(f.__defaults__)
        self.feed(f.__kwdefaults__)
        self.feed(f.__closure__)
        if self.versioned(f.__module__):
            self.module_token(f.__module__)  # its globals are module-level names of versioned code
            return
        names = set()
        stack = [f.__code__]
        while stack:
            co = stack.pop()
            names.update(co.co_names)
            stack.extend(c for c in co.co_consts if isinstance(c, types.CodeType))
        for name in sorted(names):
            if name in f.__globals__:
                self.text("global", name)
                self.feed(f.__globals__[name])
            elif hasattr(builtins, name):
                self.text("builtin-name", name)
            else:
                self.text("unbound", name)

    def cls(self, kind: type) -> None:
        module = getattr(kind, "__module__", None)
        self.text("class", f"{module}.{kind.__qualname__}")
        if self.versioned(module):
            self.module_token(module)
            return
        # a class defined in a notebook: its bases and its own attributes (methods walked like functions)
        self.feed(kind.__bases__)
        for name, value in sorted(vars(kind).items()):
            if name not in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__"):
                self.text("attr", name)
                self.feed(value)

    def pickled(self, obj) -> None:
        """Any other object: its pickle, with the functions, classes and modules inside it keyed as above
        (pickle itself names them only, so an edited class would go unnoticed)."""
        outer = self

        class Pickler(pickle.Pickler):
            def persistent_id(self, o):
                if o is obj:
                    return None
                if isinstance(o, (types.FunctionType, types.MethodType, types.ModuleType, type, types.CodeType,
                                  types.BuiltinFunctionType, functools.partial)):
                    return outer.sub(o)
                return None

        buffer = _Buffer()
        try:
            Pickler(buffer, protocol=4).dump(obj)
        except _Unkeyable:
            raise
        except Exception as exc:  # noqa: BLE001 - anything pickle refuses cannot be keyed
            raise _Unkeyable(f"{type(obj).__name__} cannot be pickled: {exc}") from None
        self.text("pickle", type(obj).__qualname__)
        self.feed(type(obj))
        self.h.update(buffer.digest.digest())


class _Buffer:
    """A write-only file that hashes what pickle writes (no copy of the pickle is kept)."""

    def __init__(self):
        self.digest = hashlib.sha256()

    def write(self, data) -> int:
        self.digest.update(data)
        return len(data)


def _fingerprint(obj, source: list) -> str | None:
    hasher = _Hasher(source)
    try:
        hasher.feed(obj)
    except (_Unkeyable, RecursionError):
        return None
    return hasher.h.hexdigest()


def fingerprint(obj) -> str | None:
    """A hex sha256 of what ``obj`` is, the same in every process; None if ``obj`` cannot be keyed.

    Functions count by their code (bytecode, constants including nested code, names), their defaults,
    their closure cells' contents and the globals they read (walked the same way); code from a module
    with a version counts by that module's name and version, attnlib's own by the hash of its source
    files. numpy arrays count by dtype, shape and bytes; containers by their items; numbers, strings,
    bytes, bools and None by value; any other object by a pickle whose functions and classes are keyed
    as above. Cycles are cut by back-references. None when some part has no stable form.
    """
    return _fingerprint(obj, [])


def _state(view, values: dict) -> list:
    """``values`` as plain numbers in slider order (floats rounded as the view's cache rounds them)."""
    import numpy as np

    names = list(view.sliders)
    if not isinstance(values, dict) or set(values) != set(names):
        raise ValueError(f"values must give a value for each slider {sorted(names)}; got {values!r}")
    out = []
    for name in names:
        v = values[name]
        if isinstance(v, (float, np.floating)):
            v = round(float(v), 9)
        elif isinstance(v, (np.integer,)) and not isinstance(v, (bool, np.bool_)):
            v = int(v)
        out.append((name, v))
    return out


def _rc_digest(source: list) -> str | None:
    """The matplotlib settings in force (a rcParams change can change pixels)."""
    import matplotlib

    rc = {k: v for k, v in sorted(matplotlib.rcParams.items()) if not k.startswith(_RC_IGNORED)}
    return _fingerprint(rc, source)


def view_fingerprint(view) -> str | None:
    """The digest of everything a view's frames depend on except the state (None: cannot be keyed).

    Its draw function (with the data it closes over), the sliders' grids, the reference
    state the layout is frozen at, attnlib's source, and the versions of the software that draws and
    encodes a frame (matplotlib and its FreeType, numpy, Pillow) with the encoding's ``FORMAT``.
    """
    import matplotlib
    import numpy as np
    import PIL
    from matplotlib import ft2font

    source = [attnlib_source_hash()]
    parts = [_fingerprint(view.draw, source)]
    grids = [(name, slider.values) for name, slider in view.sliders.items()]
    parts.append(_fingerprint(grids, source))
    parts.append(_fingerprint(_state(view, view._reference), source))
    if any(p is None for p in parts):
        return None
    versions = (f"matplotlib {matplotlib.__version__}; freetype {ft2font.__freetype_version__}; "
                f"numpy {np.__version__}; pillow {PIL.__version__}; {FORMAT}")
    return hashlib.sha256("\n".join([*parts, source[0], versions]).encode()).hexdigest()


def frame_key(view, values: dict, view_digest: str | None = None) -> str | None:
    """The store key (64 hex digits) of ``view``'s frame for ``values``; None if the view cannot be keyed.

    sha256 over ``view_fingerprint(view)`` (pass it as ``view_digest`` to skip computing it again), the
    state and the matplotlib settings in force. Same inputs, same key, in any process.
    """
    state = _state(view, values)
    base = view_digest if view_digest is not None else view_fingerprint(view)
    if base is None:
        return None
    state_digest, rc = _fingerprint(state, []), _rc_digest([])
    if state_digest is None or rc is None:
        return None
    return hashlib.sha256(f"{base}\n{state_digest}\n{rc}".encode()).hexdigest()


def _check_key(key) -> str:
    if not isinstance(key, str) or not _HEX_KEY.fullmatch(key):
        raise ValueError(f"key must be a sha256 hex digest (64 lowercase hex digits, as frame_key gives); "
                         f"got {key!r}")
    return key


class FrameStore:
    """Frames on disk: ``root/ab/abcdef….png`` for key ``abcdef…`` (64 hex digits).

    ``put`` writes a temporary file in the same folder and renames it over the target (``os.replace``),
    so a reader (another kernel, a site build beside it) sees a whole frame or none.
    """

    def __init__(self, root):
        if not isinstance(root, (str, os.PathLike)) or str(root) == "":
            raise TypeError(f"root must be a folder path (str or Path); got {root!r}")
        self.root = Path(root).expanduser()
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"root must be a folder; {str(self.root)!r} is a file")

    def __repr__(self) -> str:
        return f"FrameStore({str(self.root)!r})"

    def path(self, key: str) -> Path:
        key = _check_key(key)
        return self.root / key[:2] / f"{key}.png"

    def get(self, key: str) -> bytes | None:
        """The frame stored under ``key``, or None."""
        try:
            png = self.path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return png if png.startswith(PNG_SIGNATURE) else None

    def put(self, key: str, png: bytes) -> None:
        """Store ``png`` under ``key`` (atomically; a frame already there is kept: same key, same bytes)."""
        target = self.path(key)
        if not isinstance(png, (bytes, bytearray)) or not bytes(png[:8]) == PNG_SIGNATURE:
            head = bytes(png[:8]) if isinstance(png, (bytes, bytearray)) else png
            raise ValueError(f"png must be PNG bytes (starting with the PNG signature); got {type(png).__name__} "
                             f"starting {head!r}"[:200])
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".png", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(png)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def keys(self) -> list[str]:
        """Every stored key, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.stem for p in self.root.glob("??/*.png") if _HEX_KEY.fullmatch(p.stem))

    def size_bytes(self) -> int:
        """Bytes of the stored frames."""
        return sum(self.path(k).stat().st_size for k in self.keys())


def default_store() -> FrameStore | None:
    """The store named by ``ATTNLIB_FRAMES`` (read now): a folder, or unset / "" / "off" for none."""
    value = os.environ.get(ENV, "").strip()
    if value == "" or value.lower() == "off":
        return None
    try:
        return FrameStore(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{ENV}={value!r}: {exc} (set it to a folder, or to 'off')") from None
