"""Kernel.show(): the SVG of what a program selects (Jupyter draws it through _repr_svg_),
checked against NumPy: every cell it marks as read, numbered in output order, is the input
element NumPy's own indexing puts at that position of the result."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import slc

SVG = "{http://www.w3.org/2000/svg}"


def read_cells(svg):
    """(coordinates, output order) of every cell the picture marks as read; of a chain drawn
    stage by stage, those of the last stage (the whole program)."""
    root = ET.fromstring(svg)
    stages = [g for g in root.iter(SVG + "g") if g.get("class") == "stage"]
    cells = []
    for rect in (stages[-1] if stages else root).iter(SVG + "rect"):
        if "read" in rect.get("class", "").split():
            coords = tuple(int(c) for c in rect.get("data-coords").split(","))
            cells.append((coords, int(rect.get("data-order"))))
    return cells


@pytest.mark.parametrize(
    "expr, steps",
    [
        ("a[::-1, 1:4:2]", [np.s_[::-1, 1:4:2]]),
        ("a[1:3, ::-1]", [np.s_[1:3, ::-1]]),
        ("a[2]", [np.s_[2]]),
        ("a[..., None, ::2]", [np.s_[..., None, ::2]]),
        ("a[1:, 1:][::-1]", [np.s_[1:, 1:], np.s_[::-1]]),
    ],
)
def test_the_picture_marks_what_numpy_selects(expr, steps):
    a = np.arange(20, dtype=np.int64).reshape(4, 5)
    k = slc.compile(expr, a=a)
    want = a
    for step in steps:
        want = want[step]
    want = want.ravel()
    cells = read_cells(k.show())
    assert sorted(order for _, order in cells) == list(range(want.size))
    for coords, order in cells:
        assert a[coords] == want[order], (coords, order)


def test_jupyter_draws_the_same_picture():
    k = slc.compile("a[::-1]", a=("float32", (3, 4)))
    assert k._repr_svg_() == k.show()
    assert k.show().startswith("<svg")


def test_a_program_without_an_input_to_draw_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot draw"):
        slc.compile("[1, 2, 3][::-1]").show()
