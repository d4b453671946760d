# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Writes fuzz seeds as the corpus directories keep them: one file per
input, named by its content, so a regenerated seed keeps its name."""
import hashlib
import os


def write(out, inputs):
    os.makedirs(out, exist_ok=True)
    for data in inputs:
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
            f.write(data)
