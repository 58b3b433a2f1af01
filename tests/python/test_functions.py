"""formats, layer, open, inspect, sweep, lessons and figure against the program on the same inputs."""

import json
import os
import struct
import time
import unittest
from unittest import mock

import numpy as np

import quantscope as qs
from helpers import LESSON, Folder, cli_words, random_tensor, run, run_json, write_gguf, write_safetensors


def bf16_bytes(values):
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()


class Functions(Folder):
    def test_formats_is_formats_json(self):
        x = random_tensor((16, 256), seed=2)
        self.assertEqual(qs.formats(x), run_json("formats", self.saved(x), "--json")["formats"])

    def test_layer_is_the_layers_json(self):
        w, x = random_tensor((32, 64), seed=1), random_tensor((20, 64), seed=2)
        b = random_tensor((32,), seed=3)
        files = ["--weights", self.saved(w, "w.npy"), "--inputs", self.saved(x, "x.npy")]
        cases = [
            (dict(dtype="int8", granularity="channel", activations="int8"), []),
            (dict(dtype="int4", granularity="group", group_size=32, method="gptq", act_order=True), []),
            (dict(dtype="int4", granularity="group", group_size=32, method="awq", grid=5), []),
            (dict(dtype="int4", method="rotate", rotation="random-hadamard", seed=3), []),
        ]
        for options, _ in cases:
            with self.subTest(options=options):
                self.assertEqual(qs.layer(w, x, **options), run_json("layer", *files, *cli_words(options)))
        with_bias = run_json("layer", *files, "--bias", self.saved(b, "b.npy"))
        self.assertEqual(qs.layer(w, x, b), with_bias)
        random = run_json("layer", "--weights", files[1], "--random-inputs", "relu", "--tokens", "7", "--seed", "4")
        self.assertEqual(qs.layer(w, random_inputs="relu", tokens=7, seed=4), random)

    def test_open_reads_what_the_program_reads(self):
        x = random_tensor((3, 4, 5), seed=4)
        for dtype in (np.float16, np.float32, np.float64):
            a = x.astype(dtype)
            path = self.saved(a, "a.npy")
            for mmap in (False, True):
                got = qs.open(path, mmap=mmap)
                self.assertEqual(got.dtype, np.dtype(dtype))
                self.assertTrue(np.array_equal(got, a))
                self.assertEqual(got.flags.writeable, not mmap)
        csv = self.path("t.csv")
        with open(csv, "w") as f:
            f.write("1.5,2\n3,4.25\n")
        self.assertEqual(qs.open(csv).tolist(), [[1.5, 2.0], [3.0, 4.25]])
        # rank > 3 is viewed as 3-D, as the program views it
        self.assertEqual(qs.open(self.saved(np.ones((2, 3, 4, 5), np.float32), "r4.npy")).shape, (6, 4, 5))

    def test_safetensors_and_gguf(self):
        w = random_tensor((4, 64), seed=6)
        st = self.path("m.safetensors")
        write_safetensors(st, {"a.weight": ("F32", w.shape, w.tobytes()), "b.weight": ("BF16", w.shape, bf16_bytes(w))})
        self.assertEqual(qs.inspect(st), run_json("inspect", st, "--json"))
        self.assertEqual(qs.open(st, "a.weight").tobytes(), w.tobytes())
        bf = qs.open(st, "b.weight")
        self.assertEqual(bf.dtype, np.float32)
        exported = self.path("b.npy")
        run("export", st, "--tensor", "b.weight", "--out", exported)
        self.assertEqual(bf.tobytes(), np.load(exported).tobytes())
        rows = qs.sweep(st, dtype="int4", granularity="group", group_size=32)
        want = run_json("sweep", st, "--dtype", "int4", "--granularity", "group", "--group-size", "32", "--json")
        self.assertEqual(rows, want["tensors"])
        self.assertEqual([r["name"] for r in rows], ["a.weight", "b.weight"])

        # a GGUF with an F32 tensor and a Q8_0 one (type 8: fp16 d, then 32 int8 codes per block)
        q8 = b""
        for block in range(4):
            q8 += struct.pack("<e", 0.5 + block) + bytes((i * 7 + block) % 256 for i in range(32))
        gguf = self.path("m.gguf")
        write_gguf(gguf, [("f.weight", 0, [64, 4], w.tobytes()), ("q.weight", 8, [64, 2], q8)])
        self.assertEqual(qs.inspect(gguf), run_json("inspect", gguf, "--json"))
        run("export", gguf, "--tensor", "q.weight", "--out", exported)
        self.assertEqual(qs.open(gguf, "q.weight").tobytes(), np.load(exported).tobytes())
        self.assertEqual(qs.open(gguf, "f.weight").tobytes(), w.tobytes())

    def test_lessons_are_the_programs_list(self):
        names = [line.split()[0] for line in run("lesson", "list").stdout.decode().splitlines()]
        listed = qs.lessons()
        self.assertEqual([lesson["name"] for lesson in listed], names)
        self.assertTrue(all(lesson["steps"] > 0 and lesson["title"] for lesson in listed))

    def test_figure_is_renders_png(self):
        x = random_tensor((24, 64), seed=8)
        path = self.saved(x)
        cases = [(dict(), ["--width", "1600"]),
                 (dict(dtype="int4", granularity="group", group_size=8, size=(900, 300)), ["--width", "900"]),
                 (dict(dtype="q4_0", lesson_look=True, cmap="viridis"), ["--width", "1600", "--lesson-look"])]
        for options, words in cases:
            with self.subTest(options=options):
                fig = qs.figure(x, **options)
                words = cli_words({k: v for k, v in options.items() if k not in ("size", "lesson_look")}) + words
                run("render", path, *words, "--out", self.path("f.png"))
                with open(self.path("f.png"), "rb") as f:
                    self.assertEqual(fig.png, f.read())
                self.assertEqual(fig._repr_png_(), fig.png)
                self.assertEqual(fig.size[0], int(words[words.index("--width") + 1]))
        lesson = qs.figure(LESSON, lesson_look=True)
        lesson.save(self.path("lesson.png"))
        with open(self.path("lesson.png"), "rb") as f:
            self.assertEqual(f.read()[:8], b"\x89PNG\r\n\x1a\n")


class Window(Folder):
    """show() starts `quantscope gui FILE.npy OPTIONS` as its own process and removes FILE once it ends."""

    def fake_program(self):
        script = self.path("fake-quantscope")
        record = self.path("args.txt")
        with open(script, "w") as f:
            f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {record}\ncp \"$2\" {self.path('seen.npy')}\n")
        os.chmod(script, 0o755)
        return script, record

    def test_show_runs_the_window_on_a_copy_of_x(self):
        script, record = self.fake_program()
        x = random_tensor((5, 7), seed=11)
        with mock.patch.dict(os.environ, {"QUANTSCOPE_EXECUTABLE": script, "DISPLAY": ":99"}):
            window = qs.show(x, dtype="int4", granularity="channel")
            self.assertEqual(window.wait(timeout=30), 0)
        with open(record) as f:
            args = f.read().split()
        self.assertEqual(args[0], "gui")
        self.assertEqual(args[2:], ["--dtype", "int4", "--granularity", "channel"])
        self.assertEqual(np.load(self.path("seen.npy")).tobytes(), x.tobytes())
        for _ in range(100):  # the file goes once the window has ended
            if not os.path.exists(os.path.dirname(args[1])):
                break
            time.sleep(0.05)
        self.assertFalse(os.path.exists(os.path.dirname(args[1])))

    def test_without_a_display_or_a_program(self):
        with mock.patch.dict(os.environ, {"DISPLAY": "", "WAYLAND_DISPLAY": ""}):
            self.assertRaises(OSError, qs.show, LESSON)
        with mock.patch.dict(os.environ, {"QUANTSCOPE_EXECUTABLE": self.path("missing")}):
            with self.assertRaises(OSError) as caught:
                qs.figure(LESSON)
            self.assertIn("QUANTSCOPE_EXECUTABLE", str(caught.exception))

    def test_a_bad_option_is_its_line(self):
        with mock.patch.dict(os.environ, {"DISPLAY": ":99"}):
            with self.assertRaises(ValueError) as caught:
                qs.show(LESSON, dtype="int99")
        self.assertIn("unknown dtype", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
