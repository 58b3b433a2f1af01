"""What a notebook can throw at the module: NaN, empty and rank-4 arrays, bad options, lying files, Ctrl-C.
Each is one ValueError (OSError for a file) with the program's line, and the interpreter goes on."""

import _thread
import gc
import struct
import sys
import threading
import time
import unittest

import numpy as np

import quantscope as qs
from helpers import LESSON, Folder, random_tensor, write_safetensors


class BadValues(unittest.TestCase):
    def assertRefused(self, kind, text, call, *args, **kwargs):
        with self.assertRaises(kind) as caught:
            call(*args, **kwargs)
        message = str(caught.exception)
        self.assertIn(text, message)
        self.assertNotIn("\n", message)
        self.assertLess(len(message), 1000)
        # and the interpreter goes on
        self.assertEqual(qs.quantize(LESSON).zero_point.tolist(), [-77])

    def test_values(self):
        nan = LESSON.copy()
        nan[1, 2] = np.nan
        self.assertRefused(ValueError, "NaN at index [1, 2]", qs.quantize, nan)
        inf = LESSON.astype(np.float64)
        inf[0, 0] = -np.inf
        self.assertRefused(ValueError, "-Inf at index [0, 0]", qs.quantize, inf)
        self.assertRefused(ValueError, "outside the float32 range", qs.quantize, np.array([1e300, 1.0]))
        self.assertRefused(ValueError, "NaN", qs.formats, nan)
        self.assertRefused(ValueError, "NaN", qs.layer, nan, LESSON)

    def test_shapes(self):
        self.assertRefused(ValueError, "empty", qs.quantize, np.zeros((0, 3), np.float32))
        self.assertRefused(ValueError, "empty", qs.quantize, [])
        self.assertRefused(ValueError, "rank 4", qs.quantize, np.zeros((2, 2, 2, 2), np.float32))
        self.assertRefused(ValueError, "0-d", qs.quantize, np.float32(3))
        self.assertRefused(ValueError, "real numbers", qs.quantize, np.array([1 + 2j]))
        self.assertRefused(ValueError, "real numbers", qs.quantize, np.array(["a", "b"]))
        self.assertRefused(ValueError, "real numbers", qs.quantize, np.array([None, 1]))
        self.assertRefused(ValueError, "rank 4", qs.figure, np.zeros((2, 2, 2, 2), np.float32))

    def test_options(self):
        x = random_tensor((8, 64))
        self.assertRefused(ValueError, "unknown dtype", qs.quantize, x, dtype="int99")
        self.assertRefused(ValueError, "unknown dtype", qs.quantize, x, dtype="x" * 100_000_000)
        self.assertRefused(ValueError, "does not divide", qs.quantize, x, granularity="group", group_size=7)
        self.assertRefused(ValueError, "scale must be finite and > 0", qs.quantize, x, scale=-1.0, zero_point=0)
        self.assertRefused(ValueError, "scale", qs.quantize, x, scale=float("nan"), zero_point=0)
        self.assertRefused(ValueError, "unknown option '--bogus'", qs.quantize, x, bogus=3)
        self.assertRefused(ValueError, "importance", qs.quantize, x, dtype="q4_0", importance=np.ones(3))
        self.assertRefused(ValueError, "importance", qs.quantize, x, dtype="q4_0", importance=np.full(64, np.nan))
        self.assertRefused(ValueError, "--method", qs.layer, x, x, method="magic")
        self.assertRefused(ValueError, "--random-inputs", qs.layer, x)
        self.assertRefused(ValueError, "unknown dtype", qs.figure, x, dtype="int99")


class LyingFiles(Folder):
    def write(self, name, data):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_files(self):
        huge = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }"
        header = huge + b" " * (-(len(huge) + 11) % 64) + b"\n"
        npy = self.write("huge.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 64)
        for mmap in (False, True):
            with self.assertRaises(OSError) as caught:
                qs.open(npy, mmap=mmap)
            self.assertIn("huge.npy", str(caught.exception))
        truncated = self.saved(random_tensor((100, 100)))
        with open(truncated, "r+b") as f:
            f.truncate(1000)
        self.assertRaises(OSError, qs.open, truncated)
        st = self.write("m.safetensors", struct.pack("<Q", 1 << 40) + b"{}")
        self.assertRaises(OSError, qs.open, st)
        self.assertRaises(OSError, qs.inspect, st)
        self.assertRaises(OSError, qs.sweep, st)
        self.assertRaises(OSError, qs.inspect, self.write("bad.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1 << 62, 0)))
        self.assertRaises(OSError, qs.open, self.path("missing.npy"))
        self.assertRaises(OSError, qs.open, self._dir.name)  # a folder
        self.assertEqual(qs.quantize(LESSON).zero_point.tolist(), [-77])


class NoLeaks(Folder):
    def test_ten_thousand_calls_keep_no_reference(self):
        x = random_tensor((4, 32))
        weights = np.ones(32, np.float32)
        bad = x.copy()
        bad[0, 0] = np.nan
        path = self.saved(x)
        missing = self.path("missing.npy")

        def calls(count):
            for i in range(count):
                r = qs.quantize(x, dtype="q4_0", importance=weights)
                r.codes, r.packed()
                qs.open(path, mmap=i % 2 == 0)
                for call, args, error in ((qs.quantize, (bad,), ValueError), (qs.open, (missing,), OSError)):
                    try:
                        call(*args)
                    except error:
                        pass
                if i % 10 == 0:  # the threaded ones (a worker thread a call)
                    qs.formats(x)
                    qs.layer(x, x[:2])

        calls(100)  # numpy's and Python's caches settle first
        gc.collect()
        refs = sys.getrefcount(x), sys.getrefcount(weights), sys.getrefcount(bad)
        objects = len(gc.get_objects())
        calls(10_000)
        gc.collect()
        self.assertEqual((sys.getrefcount(x), sys.getrefcount(weights), sys.getrefcount(bad)), refs)
        self.assertLess(len(gc.get_objects()) - objects, 100)


class CtrlC(Folder):
    """Ctrl-C stops the work at its next check. Measured in the process's CPU seconds (every thread's), not
    wall seconds: on a loaded machine the wall time of a run varies several-fold between two runs (a wall
    bound failed with six busy processes on the test's core), the CPU the work spends does not."""

    def stops_early(self, call, *args, **kwargs):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        call(*args, **kwargs)
        whole_wall, whole_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
        timer = threading.Timer(whole_wall / 10, _thread.interrupt_main)
        start_cpu = time.process_time()
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                call(*args, **kwargs)
        finally:
            timer.cancel()
        # stopped at the next row, tensor or block, well before the end (the interrupt comes at a tenth of it)
        self.assertLess(time.process_time() - start_cpu, whole_cpu / 2)
        self.assertEqual(qs.quantize(LESSON).zero_point.tolist(), [-77])

    def test_a_format_table_stops(self):
        self.stops_early(qs.formats, random_tensor((2048, 2048)))

    def test_a_sweep_stops(self):
        tensors = {f"layer.{i}.weight": ("F32", (1024, 1024), random_tensor((1024, 1024), seed=i).tobytes())
                   for i in range(12)}
        path = self.path("m.safetensors")
        write_safetensors(path, tensors)
        self.stops_early(qs.sweep, path, dtype="int4", granularity="group", group_size=32, calibrate="mse")

    def test_a_method_stops(self):
        w = random_tensor((256, 1024), seed=1)
        self.stops_early(qs.layer, w, random_inputs="normal", tokens=512, dtype="int4", granularity="group",
                         group_size=32, method="awq")


if __name__ == "__main__":
    unittest.main()
