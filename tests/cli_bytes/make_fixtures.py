#!/usr/bin/env python3
"""Writes the small input files of the CLI byte check (tests/check_cli_bytes.sh) into fixtures/.

Only the standard library, and values from a fixed integer generator, so that the files are the same on
every machine. They are committed; rerun this only to change them (then regenerate the expected outputs
with the baseline binary: tests/check_cli_bytes.sh BASELINE --update).
"""
import json
import math
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


class Lcg:
    """A 64-bit linear congruential generator: the same numbers everywhere, unlike random's."""

    def __init__(self, seed):
        self.state = seed

    def unit(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return ((self.state >> 11) + 0.5) / float(1 << 53)

    def normal(self):
        return math.sqrt(-2.0 * math.log(self.unit())) * math.cos(2.0 * math.pi * self.unit())


def values(seed, count, scale=1.0, outliers=0):
    gen = Lcg(seed)
    out = [round(gen.normal() * scale, 6) for _ in range(count)]
    for i in range(outliers):
        out[(i * 37 + 5) % count] = (12.0 if i % 2 == 0 else -9.5) * scale
    return out


def write_npy(name, shape, data, descr="<f4"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"<f4": "<%df", "<f8": "<%dd", "<f2": "<%de"}[descr] % len(data)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(fmt, *data))


def encode(dtype, data):
    if dtype == "F32":
        return struct.pack("<%df" % len(data), *data)
    if dtype == "F64":
        return struct.pack("<%dd" % len(data), *data)
    if dtype == "F16":
        return struct.pack("<%de" % len(data), *data)
    if dtype == "BF16":  # the upper half of the float32 (truncation: exact for these inputs' purpose)
        return b"".join(struct.pack("<f", v)[2:] for v in data)
    if dtype == "I32":
        return struct.pack("<%di" % len(data), *[int(v * 100) for v in data])
    raise ValueError(dtype)


def write_safetensors(name, tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for tname, dtype, shape, data in tensors:
        blob = encode(dtype, data)
        header[tname] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    os.makedirs(HERE, exist_ok=True)
    model = [
        ("embed.weight", "F32", [16, 64], values(1, 16 * 64, 0.5)),
        ("layer.0.weight", "F16", [8, 32], values(2, 8 * 32, 0.2, outliers=2)),
        ("layer.0.bias", "F32", [8], values(3, 8, 0.1)),
        ("layer.1.weight", "BF16", [8, 48], values(4, 8 * 48, 0.3)),
        ("norm", "F64", [32], [1.0 + v for v in values(5, 32, 0.05)]),
        ("step", "I32", [4], values(6, 4)),
        ("conv", "F32", [4, 2, 3, 3], values(7, 72, 0.4)),
    ]
    write_safetensors("model.safetensors", model)
    # A sharded checkpoint: two shards and their index.
    write_safetensors("shard-a.safetensors", model[:2])
    write_safetensors("shard-b.safetensors", model[2:5])
    index = {"metadata": {"total_size": 0}, "weight_map": {
        t[0]: ("shard-a.safetensors" if i < 2 else "shard-b.safetensors") for i, t in enumerate(model[:5])}}
    with open(os.path.join(HERE, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    # A layer: W [out 8, in 32], bias [8], x [tokens 4, in 32] with two outlier channels.
    write_npy("w.npy", [8, 32], values(11, 8 * 32, 0.1))
    write_npy("b.npy", [8], values(12, 8, 0.05))
    x = values(13, 4 * 32)
    for t in range(4):
        x[t * 32 + 3] *= 20.0
        x[t * 32 + 17] *= -15.0
    write_npy("x.npy", [4, 32], x)
    write_npy("t3d.npy", [2, 4, 16], values(14, 2 * 4 * 16), descr="<f8")
    write_npy("h.npy", [4, 32], values(15, 4 * 32), descr="<f2")
    with open(os.path.join(HERE, "small.csv"), "w") as f:
        rows = values(16, 4 * 6, 2.0)
        for r in range(4):
            f.write(",".join("%g" % v for v in rows[r * 6:(r + 1) * 6]) + "\n")
    # Broken inputs: a truncated checkpoint and a text file posing as .npy.
    with open(os.path.join(HERE, "model.safetensors"), "rb") as f:
        data = f.read()
    with open(os.path.join(HERE, "truncated.safetensors"), "wb") as f:
        f.write(data[:len(data) - 100])
    with open(os.path.join(HERE, "not.npy"), "w") as f:
        f.write("this is not a .npy file\n")


if __name__ == "__main__":
    main()
