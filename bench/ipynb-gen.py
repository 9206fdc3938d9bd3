# SPDX-License-Identifier: ISC
"""Write a ~20 MB notebook (images and text) with nbformat.

usage: ipynb-gen.py OUT [MB]
"""
import base64
import random
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

out = sys.argv[1]
target = int(sys.argv[2]) if len(sys.argv) > 2 else 20
rnd = random.Random(42)
nb = new_notebook(metadata={"kernelspec": {"name": "python3",
                                           "display_name": "Python 3",
                                           "language": "python"}})
size = 0
i = 0
while size < target * 1024 * 1024:
    nb.cells.append(new_markdown_cell("## Section %d\n\nSome text, \u00e9\u4e2d "
                                      "and *markdown*.\n" % i))
    img = base64.b64encode(rnd.randbytes(45000)).decode()
    text = "".join("step %d loss %.6f acc %.4f\n" % (j, rnd.random(),
                                                     rnd.random())
                   for j in range(600))
    nb.cells.append(new_code_cell(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
        "ax.plot(x%d)\nplt.show()\n" % i, execution_count=i + 1,
        outputs=[new_output("stream", name="stdout", text=text),
                 new_output("display_data",
                            data={"image/png": img,
                                  "text/plain": "<Figure size 640x480>"},
                            metadata={"image/png": {"width": 640}})]))
    size += len(img) + len(text) + 300
    i += 1
nbformat.write(nb, out)
