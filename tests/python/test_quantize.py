"""quantscope.quantize against `quantscope quantize` on the same values: codes, r', |r - r'|, the JSON and the
packed bytes, bit for bit; the lessons' numbers; the arrays written once (no second copy)."""

import json
import os
import tracemalloc
import unittest

import numpy as np

import quantscope as qs
from helpers import LESSON, Folder, cli_words, random_tensor, run

# (options as keywords, the same as the program's words, input shape)
CASES = [
    (dict(), (3, 3)),
    (dict(dtype="int4", granularity="group", group_size=32), (64, 128)),
    (dict(dtype="uint8", granularity="channel", axis=1), (16, 24)),
    (dict(dtype="int4", mode="symmetric"), (33, 17)),
    (dict(dtype="int8", calibrate="percentile:99.5"), (50, 40)),
    (dict(dtype="int4", calibrate="mse", granularity="channel"), (12, 64)),
    (dict(dtype="int8", rounding="half-away", recompute_scale=True), (8, 8)),
    (dict(dtype="int16"), (4, 5, 6)),
    (dict(dtype="int3", granularity="group", group_size=2), (1000,)),
    (dict(dtype="fp8-e4m3"), (20, 30)),
    (dict(dtype="fp4-e2m1", granularity="channel"), (8, 64)),
    (dict(dtype="nf4", granularity="group", group_size=64), (4, 128)),
    (dict(dtype="mxfp4"), (4, 64)),
    (dict(dtype="nvfp4"), (4, 64)),
    (dict(dtype="q8_0"), (8, 64)),
    (dict(dtype="q4_1"), (8, 64)),
    (dict(dtype="q4_k"), (4, 512)),
    (dict(dtype="q6_k"), (2, 256)),
    (dict(dtype="iq4_nl"), (4, 64)),
    (dict(dtype="tq2_0"), (2, 256)),
    (dict(dtype="int8", overflow="wrap"), (6, 6)),
]


class AgainstTheProgram(Folder):
    def check_case(self, x, options, importance=None):
        source = self.saved(x)
        extra = []
        if importance is not None:
            extra = ["--importance", self.saved(importance, "w.npy")]
        outs = [self.path(n) for n in ("q.npy", "d.npy", "e.npy", "p.bin")]
        done = run("quantize", source, *cli_words(options), *extra, "--out-quantized", outs[0], "--out-dequantized",
                   outs[1], "--out-error", outs[2], "--out-packed", outs[3])
        r = qs.quantize(x, importance=importance, **options)
        for got, path in ((r.codes, outs[0]), (r.dequantized, outs[1]), (r.error, outs[2])):
            want = np.load(path)
            self.assertEqual(got.dtype, want.dtype, options)
            self.assertEqual(got.shape, want.shape, options)
            self.assertEqual(got.tobytes(), want.tobytes(), options)
        self.assertEqual(r.metrics, json.loads(done.stdout), options)
        with open(outs[3], "rb") as f:
            self.assertEqual(r.packed(), f.read(), options)
        self.assertEqual(r.bits_per_weight, r.metrics["bits_per_weight"])
        self.assertEqual(r.bytes, r.metrics["bytes"])
        # every block's s and z, as --all-params lists them
        listed = qs.quantize(x, importance=importance, all_params=True, **options).metrics
        self.assertEqual(r.scale.tolist(), listed["scale"], options)
        self.assertEqual(r.zero_point.tolist(), listed["zero_point"], options)
        return r

    def test_every_case_is_the_programs(self):
        for i, (options, shape) in enumerate(CASES):
            x = LESSON if shape == (3, 3) else random_tensor(shape, seed=i) * 3
            with self.subTest(options=options):
                self.check_case(x, options)

    def test_float16_and_float64_inputs_are_read_as_stored(self):
        for dtype in (np.float16, np.float64):
            with self.subTest(dtype=dtype):
                self.check_case(random_tensor((16, 32), seed=5, dtype=dtype), dict(dtype="int4"))

    def test_importance_as_an_array(self):
        x = random_tensor((4, 256), seed=7)
        weights = np.linspace(0.1, 2.0, 256, dtype=np.float32)
        r = self.check_case(x, dict(dtype="q4_k"), importance=weights)
        self.assertIn("importance_weighted_mse", r.metrics)

    def test_a_manual_pair(self):
        self.check_case(LESSON, dict(scale=3.5, zero_point=-70))


class TheLessons(unittest.TestCase):
    def test_the_lessons_int8_numbers(self):
        # seed 000 prints "new scale: 3.578823433670343", "new zero point: -77" for its float32 tensor
        r = qs.quantize(LESSON)
        self.assertEqual(r.scale.tolist(), [3.578823433670343])
        self.assertEqual(r.zero_point.tolist(), [-77])
        self.assertEqual(r.codes.dtype, np.int8)
        self.assertEqual(r.codes[0, 2], 127)
        self.assertEqual(r.codes[1, 2], -128)
        self.assertTrue(np.array_equal(r.error, np.abs(LESSON - r.dequantized)))

    def test_a_list_and_integers_are_accepted(self):
        self.assertEqual(qs.quantize([[1, 2], [3, 4]]).metrics["shape"], [2, 2])
        self.assertEqual(qs.quantize([True, False, True]).metrics["shape"], [3])

    def test_a_non_contiguous_or_big_endian_array_gives_the_same_numbers(self):
        x = random_tensor((20, 30), seed=3)
        want = qs.quantize(x, dtype="int4")
        self.assertEqual(qs.quantize(np.asfortranarray(x), dtype="int4").metrics, want.metrics)
        self.assertEqual(qs.quantize(x.astype(">f4"), dtype="int4").metrics, want.metrics)
        self.assertEqual(qs.quantize(x.T.copy().T, dtype="int4").codes.tobytes(), want.codes.tobytes())

    def test_numpy_conventions(self):
        x = random_tensor((6, 10), seed=4)
        last = qs.quantize(x, granularity="channel", axis=1)
        self.assertEqual(qs.quantize(x, granularity="channel", axis=-1).metrics, last.metrics)  # numpy's -1
        r = qs.quantize(x)
        # a numpy scalar as an option is its number (numpy 2 writes np.float64(...) for its repr)
        manual = qs.quantize(x, scale=r.scale[0], zero_point=r.zero_point[0])
        self.assertEqual(manual.codes.tobytes(), r.codes.tobytes())

    def test_repr_names_the_quantization(self):
        self.assertIn("int8 tensor asymmetric of 3x3: SQNR", repr(qs.quantize(LESSON)))
        self.assertIn("exact", repr(qs.quantize([1.0, 2.0], scale=1.0, zero_point=0)))

    def test_the_arrays_come_from_x_as_quantize_saw_it(self):
        x = random_tensor((8, 8), seed=9)
        r = qs.quantize(x)
        x *= 2  # changed in place before the arrays were asked for
        with self.assertRaises(ValueError) as caught:
            r.codes
        self.assertIn("x changed in place", str(caught.exception))
        r = qs.quantize(x)
        x[[0, 1]] = x[[1, 0]]  # a permutation: every metric of the JSON stays the same
        self.assertRaises(ValueError, lambda: r.codes)
        self.assertRaises(ValueError, r.packed)
        s = qs.quantize(x)
        codes = s.codes
        x[:] = 0  # once made, the arrays stay
        self.assertIs(s.codes, codes)
        self.assertIs(s.error, s.error)


class NoSecondCopy(unittest.TestCase):
    def test_the_arrays_are_written_once(self):
        x = random_tensor((512, 1024), seed=1)
        n = x.size
        tracemalloc.start()
        try:
            r = qs.quantize(x, dtype="int8")
            r.codes  # the first array makes all three
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # codes (1 byte), r' and e (4 bytes each), nothing more of that size: no copy of x, no temporary array
        self.assertLess(peak, n * 9 + (1 << 20))
        self.assertGreaterEqual(peak, n * 9)  # the outputs themselves are numpy's (traced) memory
        for a in (r.codes, r.dequantized, r.error):
            self.assertTrue(a.flags.owndata and a.flags.c_contiguous and a.flags.writeable)
        self.assertIs(r._x, x)  # a float32 C-contiguous x is read where it is, not copied (tracemalloc sees
        # numpy's allocations, not the core's: that x reaches the core itself is checked here)


if __name__ == "__main__":
    unittest.main()
