"""python3 -m quantscope.bench [--rounds N]: the Python module's speed, with the program's as the yardstick
in the same run (issue 26's targets). Prints one JSON object; times are medians in milliseconds.

  quantize_3x3_us       quantize() of the lessons' 3 x 3 tensor, in microseconds: the cost of a call
  arrays_3x3_us         the same with its arrays
  quantize_1024_ms      quantize() of a 1024 x 1024 float32 array: s, z and the metrics (one pass)
  arrays_1024_ms        quantize() and its arrays (.codes makes codes, r' and |r - r'| in one more pass,
                        into new numpy arrays)
  quantize_4096_ms, arrays_4096_ms   the same on 4096 x 4096
  pipeline_4096_ms      `quantscope bench --pipeline-only --shape 4096x4096`: the program's in-process
                        pipeline (the three outputs into buffers it reuses), run between the rounds
  quantize_ratio        quantize_4096 over pipeline_4096, round by round (target: at most 1.15)
  arrays_ratio          arrays_4096 over pipeline_4096, round by round (new arrays: their pages are
                        faulted in and zeroed by the kernel, which the pipeline's reused buffers are not)
  figure_1024_ms        figure() of a 1024 x 1024 float32 array (target: at most 500)
  import_ms             `import quantscope` in a fresh interpreter that has imported numpy (target: 100)
  numpy_import_ms       `import numpy` alone in a fresh interpreter, for scale
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import quantscope as qs


def _median_ms(repeats, work):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _fresh_interpreter_ms(statement, setup):
    """Milliseconds `statement` takes in a new interpreter after `setup` (both Python source)."""
    code = f"import time\n{setup}\nt = time.perf_counter()\n{statement}\nprint((time.perf_counter() - t) * 1000)"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(qs.__file__))))
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, check=True).stdout
    return float(out)


def main(rounds=5):
    rng = np.random.default_rng(0)
    lesson = np.array([[191.6, -13.5, 728.6], [92.14, 295.5, -184], [0, 684.6, 245.5]], dtype=np.float32)
    medium = rng.standard_normal((1024, 1024), dtype=np.float32)
    large = rng.standard_normal((4096, 4096), dtype=np.float32)
    qs.quantize(large)  # warm-up: the thread pool, the first allocation
    python_ms, arrays_ms, program_ms, ratios, arrays_ratios = [], [], [], [], []
    for _ in range(rounds):
        out = subprocess.run([qs._executable(), "bench", "--pipeline-only", "--shape", "4096x4096", "--repeats", "3"],
                             stdout=subprocess.PIPE, check=True).stdout
        program = json.loads(out)["pipeline_ms"]
        python = _median_ms(3, lambda: qs.quantize(large))
        arrays = _median_ms(3, lambda: qs.quantize(large).codes)
        program_ms.append(program)
        python_ms.append(python)
        arrays_ms.append(arrays)
        ratios.append(python / program)
        arrays_ratios.append(arrays / program)
    row = {
        "quantize_3x3_us": _median_ms(200, lambda: qs.quantize(lesson)) * 1000,
        "arrays_3x3_us": _median_ms(200, lambda: qs.quantize(lesson).codes) * 1000,
        "quantize_1024_ms": _median_ms(15, lambda: qs.quantize(medium)),
        "arrays_1024_ms": _median_ms(15, lambda: qs.quantize(medium).codes),
        "quantize_4096_ms": statistics.median(python_ms),
        "arrays_4096_ms": statistics.median(arrays_ms),
        "pipeline_4096_ms": statistics.median(program_ms),
        "quantize_ratio": statistics.median(ratios),
        "arrays_ratio": statistics.median(arrays_ratios),
        "figure_1024_ms": _median_ms(5, lambda: qs.figure(medium)),
        "import_ms": statistics.median(_fresh_interpreter_ms("import quantscope", "import numpy") for _ in range(7)),
        "numpy_import_ms": statistics.median(_fresh_interpreter_ms("import numpy", "") for _ in range(7)),
        "rounds": rounds,
    }
    print(json.dumps(row))


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments and arguments[0] in ("-h", "--help"):
        print(__doc__)
    elif arguments[:1] == ["--rounds"] and len(arguments) == 2 and arguments[1].isdigit() and int(arguments[1]) > 0:
        main(int(arguments[1]))
    elif arguments:
        sys.exit("usage: python3 -m quantscope.bench [--rounds N]")
    else:
        main()
