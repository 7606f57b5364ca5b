#!/usr/bin/env python
"""Take the outputs of a notebook's `#| gpu` cells from a copy executed on a GPU machine (bench/gpu_check.sh saves
it as $OUT/<name>.ipynb) into the book's notebook. Only those cells change: the others keep the outputs recorded
by the book's own build. Warnings printed to stderr are left out. A cell whose source differs between the two
notebooks is refused: its output would not belong to its code.

Usage: .venv/bin/python bench/gpu_outputs.py EXECUTED.ipynb nbs/06c_cuda.ipynb   (then nbdev_clean the target)
"""
import json
import re
import sys


def is_gpu_cell(cell) -> bool:
    "A code cell whose directives (its first lines) include `#| gpu`."
    lines = ''.join(cell['source']).splitlines()[:5]
    return cell['cell_type'] == 'code' and any(re.match(r'^\s*#\|\s*gpu\s*$', ln) for ln in lines)


def take_gpu_outputs(executed: dict, book: dict) -> int:
    "Copy the gpu cells' outputs from `executed` into `book`; the number of cells copied."
    by_source = {''.join(c['source']): c for c in executed['cells'] if is_gpu_cell(c)}
    copied = 0
    for cell in filter(is_gpu_cell, book['cells']):
        src = by_source.get(''.join(cell['source']))
        if src is None: raise SystemExit(f"gpu cell not found in the executed copy (edited since?):\n{cell['source'][:3]}")
        if any(o['output_type'] == 'error' for o in src['outputs']):
            raise SystemExit(f"the executed copy has an error in:\n{cell['source'][:3]}")
        cell['outputs'] = [o for o in src['outputs'] if not (o['output_type'] == 'stream' and o['name'] == 'stderr')]
        copied += 1
    return copied


if __name__ == '__main__':
    if len(sys.argv) != 3: raise SystemExit(__doc__)
    executed, target = json.load(open(sys.argv[1])), sys.argv[2]
    book = json.load(open(target))
    n = take_gpu_outputs(executed, book)
    with open(target, 'w') as f: json.dump(book, f, indent=1, ensure_ascii=False); f.write('\n')
    print(f"{n} gpu cells' outputs taken into {target}")
