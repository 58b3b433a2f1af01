"""QuantScope in a notebook: quantize a numpy array and see what it costs, with the program's own numbers.

    import numpy as np, quantscope as qs
    r = qs.quantize(np.array([[191.6, -13.5, 728.6], [92.14, 295.5, -184], [0, 684.6, 245.5]]), dtype="int8")
    r.codes, r.dequantized, r.error, r.scale, r.zero_point, r.metrics["sqnr_db"]
    qs.figure(x, dtype="int4", granularity="group", group_size=32)    # the four panels, inline

Linear quantization (SPEC), per block of the chosen granularity:
    s = (r_max - r_min) / (q_max - q_min),  z = round(q_min - r_min / s)      (asymmetric; z clamped)
    s = max|r| / q_max,                     z = 0                            (symmetric)
    q = clamp(round(r / s + z), q_min, q_max),  r' = s (q - z),  e = |r - r'|
with float32 arithmetic as PyTorch does it, and the number formats of FORMATS.md (fp8, MX, NVFP4, NF4, ggml's
q4_K, iq4_nl ...) by their own rules. Every function runs the same code as the `quantscope` program: the
same options (as keywords, group_size for --group-size), the same numbers bit for bit, the same one-line
errors (ValueError, or OSError for a file). Options take the program's words; see `quantscope quantize --help`.
"""

import builtins as _builtins
import json as _json
import os as _os

import numpy as _np

from . import _quantscope as _core

__version__ = _core.version
__all__ = ["quantize", "Result", "figure", "Figure", "formats", "layer", "open", "inspect", "sweep", "lessons", "show"]


def _tensor(x, name="x", limit=_core.max_view_elements):
    """x as the core reads it: a C-contiguous numpy array of float16, float32 or float64 in native order.

    A torch tensor is read through .numpy() (on the CPU); integers and booleans become float64 (exact up to
    2^53 in magnitude); the array itself is used when it already fits, without a copy. More than `limit`
    elements (what the function called takes) is refused before any copy (a broadcast view may stand for
    terabytes)."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        x = _torch_numpy(x, name)
    a = _np.asarray(x)
    if a.size > limit:
        raise ValueError(f"{name}: tensor shape [{', '.join(map(str, a.shape))}] has more than {limit} elements")
    if a.dtype.kind in "biu":
        a = a.astype(_np.float64)
    elif a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4, 8):
        raise ValueError(f"{name} must hold real numbers (float16, float32 or float64), not {a.dtype}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return _np.asarray(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)


def _torch_numpy(t, name):
    """A torch tensor's values as numpy: bfloat16, the usual dtype of an LLM's weights, has no numpy type
    (.numpy() raises TypeError) and becomes float32, which holds every bfloat16 value exactly."""
    t = t.detach().cpu()
    if str(getattr(t, "dtype", "")) == "torch.bfloat16":
        t = t.float()
    try:
        return t.numpy()
    except (TypeError, RuntimeError) as e:  # a sparse, quantized or complex tensor...
        first = str(e).strip().splitlines()
        raise ValueError(f"{name}: torch cannot give this tensor to numpy ({_short(first[0] if first else '', 200)})"
                         ) from None


def _word(value):
    """An option's value as the program's word, in bytes: any str reaches the parser (which names what it
    refuses), a lone surrogate included."""
    if isinstance(value, _np.integer):
        value = int(value)
    elif isinstance(value, (float, _np.floating)):
        # the shortest text that reads back as the same double (float.__repr__: numpy 2's repr of a float64
        # is "np.float64(0.1)", and str(np.float16(0.1)) is not the value it holds)
        value = float.__repr__(float(value))
    return str(value).encode("utf-8", "surrogatepass")


def _options(**options):
    """Keywords as the program's options: group_size=128 -> --group-size 128, act_order=True -> --act-order;
    None and False are left out."""
    args = []
    for key, value in options.items():
        if isinstance(value, _np.bool_):
            value = bool(value)
        if value is None or value is False:
            continue
        args.append(_word("--" + key.replace("_", "-")))
        if value is not True:
            args.append(_word(value))
    return args


def _short(text, most=60):
    return text if len(text) <= most else text[:most] + "..."


def _path(path):
    """A file's path as the core opens it: bytes as the file system has them (a name that is not UTF-8
    comes back from os.listdir with surrogates); a NUL would cut the path short, so it is refused."""
    try:
        encoded = _os.fsencode(path)
    except TypeError:
        raise ValueError(f"a path is a str, bytes or os.PathLike, not {type(path).__name__}") from None
    if b"\0" in encoded:
        raise OSError(f"cannot read {_short(repr(_os.fsdecode(encoded)))}: a path cannot hold a NUL character")
    return encoded


# The program's defaults: left out of its options, so that a format with its own blocks (which takes no
# --granularity) accepts the signature's defaults.
_DEFAULTS = {"granularity": "tensor", "axis": 0, "calibrate": "minmax", "rounding": "half-even"}


def _quantize_options(a, dtype, mode, granularity, axis, group_size, calibrate, rounding, scale, zero_point, extra):
    if isinstance(axis, (int, _np.integer)) and -a.ndim <= axis < 0:
        axis += a.ndim  # numpy's axis=-1: the last
    given = dict(dtype=dtype, mode=mode, granularity=granularity, axis=axis, group_size=group_size,
                 calibrate=calibrate, rounding=rounding, scale=scale, zero_point=zero_point)
    for key, default in _DEFAULTS.items():
        if given[key] == default:
            given[key] = None
    given.update(extra)
    return _options(**given)


class Result:
    """What quantize() returns: the program's JSON, every block's parameters and, on first use, the arrays.

    codes        q = clamp(round(r / s + z), q_min, q_max): int8/uint8 (int16/uint16 above 8 bits); a float
                 format's bit patterns (uint8, uint16 for fp16/bf16), nf4's index, ggml's integer codes
    dequantized  r' = s (q - z), float32
    error        e = |r - r'|, float32
    scale        every block's s (float64 for int<N>, float32 as used for a format)
    zero_point   every block's z (int32), Q4_1's m (float32), else empty
    metrics      `quantscope quantize`'s JSON as a dict: shape, dtype ... mse, rmse, mae, max_abs_error,
                 l2_error, sqnr_db, clipped, levels_used, bits_per_weight, bytes

    quantize() makes one pass for the metrics; the first of codes, dequantized and error makes one more,
    which writes all three straight into new numpy arrays (no second copy). It reads x again: a Result
    keeps x, not a copy, so x must not change in place in between (a digest of its bytes, taken by
    quantize(), tells: a changed x is a ValueError rather than arrays of other values).
    """

    __slots__ = ("scale", "zero_point", "metrics", "_text", "_arrays", "_x", "_args", "_importance", "_digest")

    def __init__(self, x, args, importance, digest, out):
        self._x, self._args, self._importance, self._digest = x, args, importance, digest
        self.scale, self.zero_point = out["scale"], out["zero_point"]
        self._text = out["json"]
        self.metrics = _json.loads(self._text)
        self._arrays = None

    def _check_x(self):
        if _core.digest(self._x) != self._digest:
            raise ValueError("x changed in place since quantize(): quantize it again")

    def _computed(self, name):
        if self._arrays is None:
            self._check_x()
            self._arrays = _core.quantize(self._x, self._args, self._importance, True)
        return self._arrays[name]

    @property
    def codes(self):
        """The integer codes q (see the class)."""
        return self._computed("codes")

    @property
    def dequantized(self):
        """r' = s (q - z), float32."""
        return self._computed("dequantized")

    @property
    def error(self):
        """|r - r'|, float32."""
        return self._computed("error")

    @property
    def bits_per_weight(self):
        """Bits per element, the stored scales and zero points included."""
        return self.metrics["bits_per_weight"]

    @property
    def bytes(self):
        """The quantized tensor's size in bytes: codes packed at their bits, plus the stored scales."""
        return self.metrics["bytes"]

    def packed(self):
        """The bytes `quantize --out-packed` writes: the codes end to end (the first in the lowest bits) and
        then the stored scales; a ggml type's blocks as a GGUF file holds them. Computed from x (which must
        not have changed since quantize())."""
        self._check_x()
        return _core.packed(self._x, self._args, self._importance)

    def __repr__(self):
        m = self.metrics
        shape = "x".join(str(d) for d in m["shape"])
        sqnr = "exact" if m["sqnr_db"] is None else f"SQNR {m['sqnr_db']:.2f} dB"
        return (f"<quantscope.Result {m['dtype']} {m['granularity']} {m['mode']} of {shape}: "
                f"{sqnr}, MSE {m['mse']:.4g}, {m['bits_per_weight']:.4g} bits/weight>")


def quantize(x, dtype="int8", mode=None, granularity="tensor", axis=0, group_size=None, calibrate="minmax",
             rounding="half-even", scale=None, zero_point=None, importance=None, **options):
    """Quantizes x as `quantscope quantize` does and returns a Result (codes, dequantized, error, scale,
    zero_point, metrics, bits_per_weight, bytes, packed()).

    x            array-like of rank 1 to 3 (float16/32/64; a torch tensor; integers become float64)
    dtype        int2..int16, uint2..uint16, or a number format: fp16, bf16, fp8-e4m3, fp8-e5m2,
                 fp6-e3m2, fp6-e2m3, fp4-e2m1, nf4, mxfp8-e4m3, mxfp8-e5m2, mxfp6-e3m2, mxfp6-e2m3, mxfp4,
                 nvfp4, q8_0, q4_0, q4_1, q5_0, q5_1, the k-quants q2_k..q6_k, iq4_nl, iq4_xs, tq1_0, tq2_0
    mode         asymmetric (int<N>'s default), symmetric (a format's default) or cast
    granularity  tensor, channel (along `axis`; -1 is the last, as numpy counts) or group (of `group_size`
                 along the last axis)
    calibrate    minmax, percentile:P or mse;  rounding: half-even or half-away
    scale, zero_point  a manual pair (per tensor)
    importance   one weight per column of the last axis (llama.cpp's imatrix) for the ggml types
    options      the rest of quantize's options: recompute_scale=True, overflow="wrap",
                 recipe="naive-max255", all_params=True (list every block in metrics)

    s and z per block: asymmetric s = (r_max - r_min) / (q_max - q_min), z = round(q_min - r_min / s);
    symmetric s = max|r| / q_max, z = 0. Then q = clamp(round(r / s + z), q_min, q_max), r' = s (q - z)."""
    a = _tensor(x)
    args = _quantize_options(a, dtype, mode, granularity, axis, group_size, calibrate, rounding, scale, zero_point,
                             options)
    weights = None if importance is None else _tensor(importance, "importance")
    return Result(a, args, weights, _core.digest(a), _core.quantize(a, args, weights, False))


class Figure:
    """The four-panel figure (original, quantized, dequantized, error) as PNG bytes: shown inline by Jupyter,
    the same bytes as `quantscope render` with the same options."""

    __slots__ = ("png",)

    def __init__(self, png):
        self.png = png

    @property
    def size(self):
        """(width, height) in pixels, from the PNG's header."""
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")

    def save(self, path):
        """Writes the PNG to path."""
        with _os.fdopen(_os.open(path, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o644), "wb") as f:
            f.write(self.png)

    def _repr_png_(self):
        return self.png

    def __repr__(self):
        return "<quantscope.Figure %dx%d PNG>" % self.size


def _executable():
    return _os.environ.get("QUANTSCOPE_EXECUTABLE") or _core.executable


def _run_program(args, what, values):
    """Runs the program on the file `values`; its one error line becomes a ValueError (an OSError when it
    cannot start)."""
    import subprocess
    try:
        # no stdin (a notebook's kernel has none to give), no stdout (render writes its --out file)
        done = subprocess.run([_executable()] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    except OSError as e:
        raise OSError(f"{what}: cannot run {_executable()} ({e.strerror}); set QUANTSCOPE_EXECUTABLE") from None
    if done.returncode != 0:
        line = done.stderr.decode("utf-8", "replace").strip().splitlines()
        message = line[-1] if line else f"{what} failed (exit {done.returncode})"
        # the values' file is ours, not the caller's: its errors are x's ("x: NaN at index [0]")
        message = message.replace("quantscope: error: ", "", 1).replace(values, "x")
        raise ValueError(_short(message, 1000))
    return done


def _saved(directory, a):
    path = _os.path.join(directory, "x.npy")
    _np.save(path, a)
    return path


def figure(x, dtype="int8", mode=None, granularity="tensor", axis=0, group_size=None, calibrate="minmax",
           rounding="half-even", scale=None, zero_point=None, size=(1600, 400), lesson_look=False, **options):
    """The figure of plot_quantization_errors for x quantized as quantize() would: original, quantized,
    dequantized and error heatmaps, drawn by the program's headless renderer (`quantscope render`).

    size         (width, height): the width in pixels (320 to 8192); the height is what the four panels
                 need at that width (about a quarter of it in a row, as the lessons' 16 x 4 inch figure)
    lesson_look  the lessons' matplotlib look (titles, colour bars, annotated cells)
    options      render's own (annotate="on", cmap="viridis", slice=0, layout="grid") and quantize's
    Returns a Figure (its .png bytes; Jupyter shows it inline)."""
    import tempfile
    a = _tensor(x, limit=_core.max_elements)  # what render reads
    args = _quantize_options(a, dtype, mode, granularity, axis, group_size, calibrate, rounding, scale, zero_point,
                             options)
    width = _width(size)
    _core.check(a, "x")  # rank, emptiness: the same words as quantize (the program would fold rank 4)
    with tempfile.TemporaryDirectory(prefix="quantscope-") as directory:
        out = _os.path.join(directory, "figure.png")
        extra = ["--width", str(width)] + (["--lesson-look"] if lesson_look else [])
        values = _saved(directory, a)
        _run_program(["render", values] + args + extra + ["--out", out], "figure", values)
        try:
            with _builtins.open(out, "rb") as f:
                return Figure(f.read())
        except FileNotFoundError:
            raise OSError(f"figure: {_executable()} wrote no figure; set QUANTSCOPE_EXECUTABLE to the quantscope "
                          "program") from None


def _width(size):
    """figure's size: (width, height) or the width alone, a whole number of pixels."""
    given = size[0] if isinstance(size, (tuple, list)) and size else size
    try:
        width = int(given)
        whole = not isinstance(given, (str, bytes)) and width == given
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise ValueError(f"size must be (width, height) in pixels or the width alone, not {_short(repr(size))}")
    return width


def show(x, dtype="int8", **options):
    """Opens the QuantScope window on x (its own process: the notebook keeps running), with quantize's
    options as its starting settings. Returns the subprocess.Popen of the window."""
    import subprocess
    import tempfile
    import threading
    if not (_os.environ.get("DISPLAY") or _os.environ.get("WAYLAND_DISPLAY")):
        raise OSError("show() needs a display (DISPLAY or WAYLAND_DISPLAY is not set); figure(x) draws inline")
    a = _tensor(x, limit=_core.max_elements)
    _core.check(a, "x")
    args = _options(dtype=dtype, **options)
    directory = tempfile.mkdtemp(prefix="quantscope-")
    try:
        with _builtins.open(_os.path.join(directory, "stderr.txt"), "w+b") as errors:
            window = subprocess.Popen([_executable(), "gui", _saved(directory, a)] + args, stdin=subprocess.DEVNULL,
                                      stderr=errors, start_new_session=True)
            # A bad option ends the window at once with the program's line: say it here, not in the kernel's log.
            try:
                code = window.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                code = None
            if code:
                errors.seek(0)
                lines = errors.read().decode("utf-8", "replace").strip().splitlines()
                raise ValueError((lines[-1] if lines else f"the window ended (exit {code})")
                                 .replace("quantscope: error: ", "", 1))
    except OSError as e:
        _remove(directory)
        raise OSError(f"show: cannot run {_executable()} ({e.strerror}); set QUANTSCOPE_EXECUTABLE") from None
    except BaseException:
        _remove(directory)
        raise

    def clean_up():  # the tensor's file lives as long as the window that may reload it
        window.wait()
        _remove(directory)

    threading.Thread(target=clean_up, daemon=True).start()
    return window


def _remove(directory):
    import shutil
    shutil.rmtree(directory, ignore_errors=True)


def formats(x):
    """Every number format on x, as `quantscope formats --json`: a list of rows {format, granularity,
    group_size, bits_per_weight, bytes, mse, sqnr_db, max_abs_error}, sorted by bits per weight.
    Ctrl-C (KeyboardInterrupt) stops it."""
    return _json.loads(_core.formats(_tensor(x, limit=_core.max_elements)))["formats"]


def layer(weights, inputs=None, bias=None, **options):
    """A linear layer y = x W^T + b with W (and optionally x) quantized, against float64, as `quantscope layer`
    prints it: a dict with weights, inputs, output (and method, rtn_output with a method).

    weights      [out, in];  inputs: [tokens, in] (or random_inputs="normal", tokens=T, seed=N);  bias: [out]
    options      the program's: dtype, mode, granularity, group_size, activations="int8", act_mode,
                 act_granularity, outlier_threshold, smooth_alpha, method="rtn|gptq|awq|rotate|rotate+gptq",
                 damp, block, act_order=True, grid, rotation, seed, all_params=True
    Ctrl-C (KeyboardInterrupt) stops a method."""
    w = _tensor(weights, "weights", _core.max_elements)
    x = None if inputs is None else _tensor(inputs, "inputs", _core.max_elements)
    b = None if bias is None else _tensor(bias, "bias", _core.max_elements)
    return _json.loads(_core.layer(w, x, b, _options(**options)))


def open(path, tensor=None, mmap=False):  # noqa: A001 (quantscope.open, as the program opens a file)
    """A tensor of a file as a numpy array: .npy (float16/32/64), .csv, .safetensors and .gguf (`tensor`
    names one; F16, F32, F64 as stored, BF16 and ggml's quantized types decoded to float32). Rank > 3 is
    viewed as 3-D, as the program does.

    mmap=True maps the file instead of reading it (read-only, as numpy.load(mmap_mode="r"): if the file is
    truncated while mapped, numpy's own reads of the lost part end the interpreter; quantscope's functions
    raise ValueError instead). Errors are OSError."""
    if tensor is not None and not isinstance(tensor, str):
        raise ValueError(f"tensor must be a tensor's name (a str), not {type(tensor).__name__}")
    return _core.open(_path(path), "" if tensor is None else _word(tensor), bool(mmap))


def inspect(path):
    """What a .safetensors or .gguf file holds, as `quantscope inspect --json`, without reading its tensors."""
    return _json.loads(_core.inspect(_path(path)))


def sweep(path, dtype="int8", **options):
    """Every tensor of a checkpoint (.safetensors, a sharded .index.json, .gguf) quantized, as
    `quantscope sweep --json`: a list of rows {name, shape, dtype, elements, min, max, mean, std,
    max_over_std, mse, rmse, mae, max_abs_error, sqnr_db, clipped, bits_per_weight, error}. Options as
    quantize's, and filter="REGEX". Ctrl-C (KeyboardInterrupt) stops it."""
    return _json.loads(_core.sweep(_path(path), _options(dtype=dtype, **options)))["tensors"]


def lessons():
    """The shipped lessons: a list of {name, steps, title, source}; open one with
    `quantscope gui --lesson NAME`."""
    return _core.lessons()
