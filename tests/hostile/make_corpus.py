#!/usr/bin/env python3
"""Writes tests/hostile/corpus/: small files that lie, break off or abuse every input format QuantScope reads.

test_hostile.cpp (and tests/gui/test_hostile_gui.cpp) run quantize, inspect, render and gui --screenshot on each
one, plus the inputs a repository cannot hold (a FIFO, a symlink loop, a directory, an empty file), which the
test makes itself. Run this script again after changing it and commit its output; nothing else needs Python.
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))


def npy(header, data=b"", magic=b"\x93NUMPY", version=b"\x01\x00", header_len=None):
    header = header.encode("latin-1") if isinstance(header, str) else header
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    body = header + b" " * pad + b"\n"
    length = len(body) if header_len is None else header_len
    return magic + version + struct.pack("<H", length) + body + data


def f4(*values):
    return struct.pack("<%df" % len(values), *values)


def safetensors(header, data=b"", length=None):
    header = header.encode("utf-8", "surrogateescape") if isinstance(header, str) else header
    return struct.pack("<Q", len(header) if length is None else length) + header + data


def session(tensor, quantization=None, view=None, raw=None):
    if raw is not None:
        return raw
    doc = {"quantscope_session": 1, "tensor": tensor, "quantization": quantization or {}}
    if view is not None:
        doc["view"] = view
    return json.dumps(doc)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"

    # ---- .npy: headers that lie about the data, break off, or hold what a terminal acts on
    write("good.npy", npy(d % "(2, 3)", f4(1, 2, 3, 4, 5, 6)))
    write("truncated_data.npy", npy(d % "(1000,)", f4(1, 2, 3)))
    write("truncated_header.npy", npy(d % "(3,)", f4(1, 2, 3))[:30])
    write("huge_shape.npy", npy(d % "(4294967296, 4294967296)", f4(1)))
    write("shape_overflow.npy", npy(d % "(99999999999999999999,)", f4(1)))
    write("negative_shape.npy", npy(d % "(-3,)", f4(1, 2, 3)))
    write("rank10.npy", npy(d % "(1, 1, 1, 1, 1, 1, 1, 1, 1, 2)", f4(1, 2)))
    write("empty_shape.npy", npy(d % "(0, 4)"))
    write("header_len_past_end.npy", npy(d % "(2,)", f4(1, 2), header_len=65000))
    write("bad_magic.npy", npy(d % "(2,)", f4(1, 2), magic=b"\x93NUMPZ"))
    write("version_9.npy", npy(d % "(2,)", f4(1, 2), version=b"\x09\x00"))
    write("object_dtype.npy", npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16))
    write("big_endian_f8.npy", npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", struct.pack(">2d", 1e300, -2)))
    write("f8_outside_float32.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", struct.pack("<2d", 1e300, 1)))
    write("nan_inf.npy", npy(d % "(3,)", f4(float("nan"), float("inf"), 1)))
    write("escape_in_key.npy", npy("{'descr': '<f4', '\x1b[2J\r\n': 1, 'shape': (1,), }", f4(1)))
    write("unterminated_dict.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", f4(1, 2)))
    write("fortran_3d.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 3), }", f4(1, 2, 3, 4, 5, 6)))
    write("long_descr.npy", npy("{'descr': '" + "<" * 3000 + "f4', 'fortran_order': False, 'shape': (1,), }", f4(1)))
    write("float32_extremes.npy", npy(d % "(4,)", f4(3.4e38, -3.4e38, 1e-45, -1e-45)))

    # ---- .safetensors: header lengths, JSON, offsets and names that lie or abuse
    one = '{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}'
    write("good.safetensors", safetensors(one, f4(1, 2)))
    write("header_len_2_63.safetensors", safetensors(one, f4(1, 2), length=1 << 63))
    write("header_len_past_end.safetensors", safetensors(one, f4(1, 2), length=4096))
    write("header_only_8_bytes.safetensors", struct.pack("<Q", 100))
    write("not_json.safetensors", safetensors("{\"w\": nope}", f4(1, 2)))
    write("deep_json.safetensors", safetensors("[" * 5000 + "]" * 5000))
    write("nan_in_header.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [NaN], "data_offsets": [0, 8]}}', f4(1, 2)))
    write("offsets_past_end.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}', f4(1, 2)))
    write("offsets_overlap.safetensors", safetensors(
        '{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}',
        f4(1, 2, 3)))
    write("shape_mismatch.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}', f4(1, 2)))
    write("shape_overflow.safetensors", safetensors(
        '{"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 8]}}', f4(1, 2)))
    write("negative_dim.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}', f4(1, 2)))
    write("unknown_dtype.safetensors", safetensors('{"w": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 8]}}', f4(1, 2)))
    write("int_dtype.safetensors", safetensors('{"w": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}}', b"\1" * 8))
    write("scalar.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}', f4(1)))
    write("empty_header.safetensors", safetensors("{}"))
    write("metadata_only.safetensors", safetensors('{"__metadata__": {"format": "pt\\u001b[31m"}}'))
    write("escape_names.safetensors", safetensors(
        '{"a\\u001b[2J\\rb\\nc\\u0000d\\u009b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, '
        '"\\u202eevil": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}', f4(1, 2, 3)))
    write("long_name.safetensors", safetensors(
        '{"' + "n" * 100000 + '": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', f4(1)))
    write("invalid_utf8_name.safetensors", safetensors(b'{"caf\xe9": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', f4(1)))
    write("duplicate_names.safetensors", safetensors(
        '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
        f4(1, 2)))
    write("many_tensors.safetensors", safetensors(
        "{" + ", ".join('"t%d\\r": {"dtype": "F32", "shape": [1], "data_offsets": [%d, %d]}' % (i, 4 * i, 4 * i + 4)
                        for i in range(300)) + "}", f4(*range(300))))
    write("f64_outside_float32.safetensors", safetensors(
        '{"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}', struct.pack("<d", 1e300)))
    write("f16_inf.safetensors", safetensors('{"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}', b"\x00\x7c\x00\x3c"))
    write("zero_size_tensor.safetensors", safetensors('{"w": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]}}'))

    # ---- .csv: NaN, huge fields, every line end, bytes that are not text
    write("good.csv", "1,2,3\n4,5,6\n")
    write("nan.csv", "1,nan,3\n")
    write("inf.csv", "1,2\ninf,4\n")
    write("out_of_range.csv", "1e400,2\n")
    write("outside_float32.csv", "1e39,2\n")
    write("huge_field.csv", "1," + "9" * 100000 + "\n")
    write("huge_fraction.csv", "0." + "1" * 100000 + ",2\n")
    write("cr_only.csv", "1,2\r3,4\r")
    write("mixed_line_ends.csv", "1,2\r\n3,4\n5,6\r")
    write("ragged.csv", "1,2,3\n4,5\n")
    write("only_commas.csv", ",,,\n,,,\n")
    write("nul_and_escape.csv", b"1,2\n3,\x00\x1b[31m\n")
    write("bom.csv", b"\xef\xbb\xbf1,2\n")
    write("latin1.csv", b"1,caf\xe9\n")
    write("blank_lines.csv", "\n\n\n")
    write("one_long_row.csv", ",".join(str(i % 97) for i in range(20000)) + "\n")
    write("terminal_title.csv", "\x1b]0;pwned\x07,1\n")

    # ---- sessions: huge strings, lying integers, references to other hostile files
    lesson = {"kind": "preset", "name": "lesson"}
    write("huge_string.json", session({"kind": "x" * 200000}))
    write("huge_view.json", session(lesson, view={"k" * 1000: "v" * 200000}))
    write("axis_1e15.json", session(lesson, {"granularity": "channel", "axis": 1000000000000000}))
    write("axis_fraction.json", session(lesson, {"granularity": "channel", "axis": 1.5}))
    write("zero_point_2_40.json", session(lesson, {"mode": "manual", "scale": 1, "zero_point": 1 << 40}))
    write("scale_zero.json", session(lesson, {"mode": "manual", "scale": 0, "zero_point": 0}))
    write("scale_huge.json", session(lesson, {"mode": "manual", "scale": 1e308, "zero_point": 0}))
    write("group_size_huge.json", session(lesson, {"granularity": "group", "group_size": 1 << 60}))
    write("inline_mismatch.json", session({"kind": "inline", "shape": [3, 3], "values": [1, 2]}))
    write("inline_huge_shape.json", session({"kind": "inline", "shape": [1 << 40, 1 << 40], "values": [1]}))
    write("inline_wide_range.json", session({"kind": "inline", "shape": [2, 2], "values": [3e36, -3e36, 1, 0]},
                                            {"dtype": "int2", "mode": "manual", "scale": 1, "zero_point": 0}))
    write("inline_denormal.json", session({"kind": "inline", "shape": [2], "values": [1e-45, 2e-45]}))
    write("random_huge.json", session({"kind": "random", "distribution": "normal", "shape": [1 << 30, 1 << 30]}))
    write("random_bad_std.json", session({"kind": "random", "distribution": "normal", "shape": [4], "std": -1}))
    write("preset_escape.json", session({"kind": "preset", "name": "les\u0000son\u001b[2J\r\n"}))
    write("file_missing.json", session({"kind": "file", "path": "no/such/file.npy"}))
    write("file_is_session.json", session({"kind": "file", "path": "file_is_session.json"}))
    write("file_truncated_npy.json", session({"kind": "file", "path": "truncated_data.npy"}))
    write("file_escape_names.json", session({"kind": "file", "path": "escape_names.safetensors", "tensor": "nope\u001b"}))
    write("file_fifo.json", session({"kind": "file", "path": "fifo.npy"}))  # the test makes fifo.npy
    write("file_loop.json", session({"kind": "file", "path": "loop.npy"}))  # and the symlink loop
    # A Model-tab row's session (compare.b: B's file and its tensor's digest; model, model.compare) whose B is
    # a FIFO, a symlink loop, a directory, a device, A itself under a digest that lies, or a name of 200 KB;
    # and layer.awq_pick values the key does not take. B that does not attach: one banner, A shown alone.
    row = {"kind": "file", "path": "good.safetensors", "tensor": "w"}
    cast = {"dtype": "fp16", "mode": "cast"}
    for name, b in [("fifo", "fifo.safetensors"), ("loop", "loop.npy"), ("dir", "directory.npy"),
                    ("dev_zero", "dev_zero.npy"), ("self", "good.safetensors"), ("huge_name", "b" * 200000)]:
        write("compare_b_%s.json" % name, session(row, cast, {"compare.b": b, "compare.b_digest": "0" * 16,
                                                            "model": b, "model.compare": b, "base_mode": "cast"}))
    for name, pick in [("nan", "nan"), ("inf", "inf"), ("huge", "9" * 400), ("negative", "-2")]:
        write("awq_pick_%s.json" % name, session(lesson, view={"layer.shown": "1", "layer.method_view": "1",
                                                               "layer.method": "awq", "layer.awq_pick": pick}))
    write("latin1_path.json", session(None, raw=b'{"quantscope_session": 1, "tensor": {"kind": "file", "path": "caf\xe9.npy"}, "quantization": {}}'))
    write("pep383_path.json", session({"kind": "file", "path": "caf\udce9.npy"}))
    write("deep.json", "[" * 20000 + "]" * 20000)
    write("not_json.json", "quantscope_session = 1\n")
    write("version_2.json", json.dumps({"quantscope_session": 2, "tensor": lesson, "quantization": {}}))
    write("many_values.json", session({"kind": "inline", "shape": [1], "values": [0] * 50000}))
    write("nan_token.json", '{"quantscope_session": 1, "tensor": {"kind": "inline", "shape": [1], "values": [NaN]}, "quantization": {}}')

    # ---- lessons (quantscope lesson check FILE, gui --lesson FILE): steps without a tensor, lying indices,
    # nesting, text a terminal acts on, tensors at float32's limits
    def lesson(steps, **top):
        doc = {"quantscope_lesson": 1, "title": "t", "source": "s", "steps": steps}
        doc.update(top)
        return json.dumps(doc)

    def step(state=None, printed=None, **more):
        s = {"title": "a", "text": "b"}
        if state is not None:
            s["state"] = state
        if printed is not None:
            s["printed"] = printed
        s.update(more)
        return s

    preset = {"preset": "lesson-randn-4x4"}
    write("lesson_no_tensor_dtype.json", lesson([step({"dtype": "int4"})]))
    write("lesson_no_tensor_recipe.json", lesson([step({"recipe": "naive-max255"})]))
    write("lesson_no_tensor_select.json", lesson([step({"select": [0, 0], "hide": ["error"]})]))
    write("lesson_no_tensor_empty_state.json", lesson([step({})]))
    write("lesson_deep.json", '{"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [' + "[" * 50000 + "]" * 50000 + "]}")
    write("lesson_select_2_63.json", lesson([step(dict(preset, select=[9223372036854775807, 0]))]))
    write("lesson_select_negative.json", lesson([step(dict(preset, select=[-1, 0]))]))
    write("lesson_at_2_63.json", lesson([step(preset, [{"label": "q", "quantity": "q", "at": [9223372036854775807, 0], "value": 1}])]))
    write("lesson_tolerance_negative.json", lesson([step(preset, [{"label": "s", "quantity": "scale", "value": 1, "tolerance": -1}])]))
    write("lesson_escapes.json", lesson([step(preset, [{"label": "\x1b[2J\r\n", "quantity": "scale", "value": 0.0156234}],
                                              title="\x1b]0;pwned\x07\u009b")], title="\x1b[31mred"))
    write("lesson_tensor_text_huge.json", lesson([step({"tensor": "tensor([[1e39, 1]])"})]))
    write("lesson_tensor_text_deep.json", lesson([step({"tensor": "tensor(" + "[" * 100000 + "1" + "]" * 100000 + ")"})]))
    write("lesson_wide_range.json", lesson([step({"tensor": [[3e36, -3e36], [1, 0]], "dtype": "int2", "scale": 1, "zero_point": 0})]))
    write("lesson_denormal.json", lesson([step({"tensor": [[1e-45, 2e-45], [-1e-45, 0]]})]))
    write("lesson_scale_2_40.json", lesson([step(dict(preset, scale=1, zero_point=1 << 40))]))
    write("lesson_version_2.json", lesson([step(preset)], quantscope_lesson=2))
    write("lesson_format_dtype.json", lesson([step(dict(preset, dtype="nvfp4"))]))


if __name__ == "__main__":
    main()
