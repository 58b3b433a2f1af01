"""The example notebook (assets/notebooks/quantscope-tour.ipynb): plain JSON with no stored outputs, and its
code cells run in order without an error."""

import contextlib
import io
import json
import os
import unittest

NOTEBOOK = os.path.join(os.path.dirname(__file__), "..", "..", "assets", "notebooks", "quantscope-tour.ipynb")


class Notebook(unittest.TestCase):
    def test_it_stores_no_outputs_and_runs(self):
        with open(NOTEBOOK, encoding="utf-8") as f:
            notebook = json.load(f)
        code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        self.assertGreater(len(code), 5)
        namespace = {}
        for i, cell in enumerate(code):
            self.assertEqual(cell["outputs"], [], f"cell {i} stores outputs")
            self.assertIsNone(cell["execution_count"])
            source = "".join(cell["source"])
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"notebook cell {i}", "exec"), namespace)  # noqa: S102 (our own notebook)
        self.assertEqual(namespace["r"].metrics["dtype"], "q4_k")
        self.assertEqual(len(namespace["blocks"]), namespace["q4k"].bytes)


if __name__ == "__main__":
    unittest.main()
