"""Dataset and Claim: validation and the four neighbour constructors."""

import math

import numpy as np
import pytest

from audit import Claim, Dataset, PrivauditError
from audit.neighbours import check_neighbours


def small():
    return Dataset(np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1]))


def test_dataset_converts_and_freezes():
    d = Dataset([1.0, 2.0], [0, 1])          # 1-D features mean d = 1
    assert d.X.shape == (2, 1) and d.X.dtype == np.float64 and d.y.dtype == np.int8
    with pytest.raises(ValueError):
        d.X[0, 0] = 5.0                      # immutable arrays


@pytest.mark.parametrize("X, y, msg", [
    (np.zeros((3, 1)), [0, 1], "3 rows"),
    (np.zeros((2, 1)), [0, 2], "labels in"),
    (np.array([[np.nan], [0.0]]), [0, 1], "NaN"),
    (np.zeros((2, 2, 2)), [0, 1], "shape"),
    ("abc", [0], "numeric"),
    (np.zeros((2, 1)), [[0, 1]], "shape"),
])
def test_dataset_rejects_bad_input(X, y, msg):
    with pytest.raises(PrivauditError, match=msg):
        Dataset(X, y)


def test_neighbour_constructors():
    d = small()
    r = d.replace(1, [5.0], 0)
    assert r.n == 3 and r.X[1, 0] == 5.0 and r.y[1] == 0 and d.X[1, 0] == 1.0
    assert check_neighbours(d, r, "replace-one") == [1]
    rm = d.remove(0)
    assert rm.n == 2 and check_neighbours(d, rm, "add-remove") == [0]
    ad = d.add([7.0], 1)
    assert ad.n == 4 and check_neighbours(d, ad, "add-remove") == [3]
    rl = d.relabel(2, 0)
    assert np.array_equal(rl.X, d.X) and rl.y[2] == 0 and check_neighbours(d, rl, "label") == [2]


def test_neighbour_constructor_errors():
    d = small()
    with pytest.raises(PrivauditError, match="out of range"):
        d.replace(3, [0.0], 0)
    with pytest.raises(PrivauditError, match="features"):
        d.add([1.0, 2.0], 0)
    with pytest.raises(PrivauditError, match="labels in"):
        d.relabel(0, 3)


def test_non_neighbours_rejected():
    d = small()
    two = d.replace(0, [9.0], 1).replace(1, [9.0], 0)
    with pytest.raises(PrivauditError, match="differ in 2 records"):
        check_neighbours(d, two, "replace-one")
    with pytest.raises(PrivauditError, match="features differ"):
        check_neighbours(d, d.replace(0, [4.0], 0), "label")
    with pytest.raises(PrivauditError, match="same size"):
        check_neighbours(d, d.remove(0), "replace-one")


def test_dataset_json_roundtrip():
    d = small()
    assert Dataset.from_dict(d.to_dict()) == d


@pytest.mark.parametrize("kw, msg", [
    (dict(epsilon=-0.1), "epsilon"),
    (dict(epsilon=math.nan), "epsilon"),
    (dict(epsilon=math.inf), "epsilon"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=-1e-9), "delta"),
    (dict(epsilon=1.0, delta=math.nan), "delta"),
    (dict(epsilon=1.0, neighbours="swap"), "neighbour relation"),
    (dict(epsilon=1.0, scope="everything"), "scope"),
    (dict(epsilon="1"), "number"),
])
def test_claim_rejects_bad_values(kw, msg):
    with pytest.raises(PrivauditError, match=msg):
        Claim(**kw)


def test_claim_roundtrip_and_description():
    c = Claim(0.0, 0.05, "replace-one", "prediction")
    assert Claim.from_dict(c.to_dict()) == c
    assert "uniformly stable" in c.describe()
    with pytest.raises(PrivauditError, match="unknown claim keys"):
        Claim.from_dict({"epsilon": 1, "eps": 2})
