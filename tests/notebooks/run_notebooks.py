"""Executes every notebook in notebooks/ headless on a small results set that
this script generates with the convlab binary (the notebooks only read results
files). Fails if any cell errors or a notebook renders no plot.

usage: /usr/bin/python3 run_notebooks.py BUILD_DIR SOURCE_DIR
"""
import glob
import os
import subprocess
import sys
import tempfile

import nbformat
from nbclient import NotebookClient


def main():
    build, src = sys.argv[1], sys.argv[2]
    convlab = os.path.join(build, "convlab")
    results = tempfile.mkdtemp(prefix="convlab_nb_")
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env = dict(os.environ, CONVLAB_RESULTS=results)

    def run(*args):
        print("+", " ".join(args), flush=True)
        subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)

    run(convlab, "layers", "mb2ic4ih9oc8kh3ph1", "g2mb2ic8ih7oc8kh3ph1", "mb2ic3ih11oc4kh5sh2",
        "--threads", "1,2", "--max-seconds", "0.02",
        "--json", os.path.join(results, "layers.json"), "--csv", os.path.join(results, "layers.csv"))
    for extra in GENERATORS:
        run(convlab, *[a.replace("{results}", results) for a in extra])

    notebooks = sorted(glob.glob(os.path.join(src, "notebooks", "*.ipynb")))
    if not notebooks:
        sys.exit("no notebooks found")
    failed = 0
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        os.environ["CONVLAB_RESULTS"] = results
        try:
            NotebookClient(nb, timeout=300, kernel_name="python3",
                           resources={"metadata": {"path": os.path.dirname(path)}}).execute()
        except Exception as e:  # a cell raised
            print(f"FAIL {os.path.basename(path)}: {str(e).splitlines()[-1] if str(e) else e}")
            failed += 1
            continue
        images = sum(1 for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
        if images == 0:
            print(f"FAIL {os.path.basename(path)}: executed but rendered no plot")
            failed += 1
        else:
            print(f"ok   {os.path.basename(path)}: {images} plot(s)")
    print(f"{len(notebooks) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


# Further result files the notebooks read, one convlab command each.
GENERATORS = [
]

if __name__ == "__main__":
    main()
