"""What the Python module's tests share: the program to compare against, and files written for it.

ctest runs each test_*.py with PYTHONPATH at build/python and QUANTSCOPE_EXECUTABLE at the program."""

import json
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np

import quantscope as qs

EXE = os.environ.get("QUANTSCOPE_EXECUTABLE") or qs._core.executable

# The lessons' tensor (seed 000: linear quantization, 3 x 3).
LESSON = np.array([[191.6, -13.5, 728.6], [92.14, 295.5, -184], [0, 684.6, 245.5]], dtype=np.float32)


def run(*args, check=True):
    """The program's stdout as text (its exit must be 0 unless check=False)."""
    done = subprocess.run([EXE] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and done.returncode != 0:
        raise AssertionError(f"quantscope {' '.join(map(str, args))}: {done.stderr.decode()}")
    return done


def run_json(*args):
    return json.loads(run(*args).stdout)


def cli_words(options):
    """Keywords as the program's words, the way quantscope passes them: group_size=32 -> --group-size 32."""
    words = []
    for key, value in options.items():
        words.append("--" + key.replace("_", "-"))
        if value is not True:
            words.append(str(value))
    return words


def random_tensor(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


class Folder(unittest.TestCase):
    """A test case with a temporary folder (self.path(name))."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="qs-python-test-")
        self.addCleanup(self._dir.cleanup)

    def path(self, name):
        return os.path.join(self._dir.name, name)

    def saved(self, array, name="x.npy"):
        p = self.path(name)
        np.save(p, array)
        return p


def write_safetensors(path, tensors):
    """tensors: {name: (dtype "F32"/"F16"/"BF16"/"F64", shape, raw bytes)}."""
    header, offset, data = {}, 0, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def write_gguf(path, tensors):
    """A GGUF v3 file without metadata. tensors: [(name, ggml type id, dims as GGUF lists them
    (innermost first), raw bytes)], each at an offset aligned to 32."""
    def string(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 0)
    offset, blobs = 0, b""
    for name, type_id, dims, raw in tensors:
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", type_id, offset)
        padded = raw + b"\0" * (-len(raw) % 32)
        blobs += padded
        offset += len(padded)
    out += b"\0" * (-len(out) % 32)
    with open(path, "wb") as f:
        f.write(out + blobs)
