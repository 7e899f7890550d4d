import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import serialize


@serialize.node
@dataclass(frozen=True)
class Leaf:
    value: object


@serialize.node
@dataclass(frozen=True)
class Pair:
    left: object
    right: object


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                    st.floats(allow_nan=False))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.tuples(inner, inner),
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
        st.builds(Leaf, inner),
        st.builds(Pair, inner, inner),
    ),
    max_leaves=12,
)


@settings(max_examples=50)
@given(values)
def test_round_trip(value):
    import json

    assert serialize.decode(json.loads(json.dumps(serialize.encode(value)))) == value


def test_special_floats_survive_json():
    import json

    data = json.loads(json.dumps(serialize.encode((math.inf, -math.inf, math.nan))))
    inf, ninf, nan = serialize.decode(data)
    assert inf == math.inf and ninf == -math.inf and math.isnan(nan)


def test_numpy_arrays_and_scalars_keep_dtype():
    arr = np.array([[1, 2], [3, 4]], dtype=np.int32)
    back = serialize.decode(serialize.encode(arr))
    assert back.dtype == np.int32 and back.shape == (2, 2) and (back == arr).all()
    s = serialize.decode(serialize.encode(np.float32(1.5)))
    assert isinstance(s, np.float32) and s == 1.5


def test_non_string_keys_and_sets():
    value = {(1, 2): frozenset({3, 4}), 5: {6}}
    assert serialize.decode(serialize.encode(value)) == value


def test_unknown_node_type_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown type 'nowhere.Missing'"):
        serialize.decode({"_t": "nowhere.Missing"})


def test_unencodable_value_names_its_type():
    with pytest.raises(TypeError, match="cannot encode object"):
        serialize.encode(object())


@pytest.mark.parametrize("value", [np.float64(-np.inf), np.float32(np.nan), np.float64(1.5), np.int32(-7),
                                   np.bool_(True)])
def test_numpy_scalars_keep_their_type_and_value_non_finite_ones_too(value):
    import json
    back = serialize.decode(json.loads(json.dumps(serialize.encode(value))))
    assert type(back) is type(value) and (back == value or (np.isnan(back) and np.isnan(value)))


def test_the_trace_of_a_max_reduction_reads_back():
    # its fill, -inf, is a numpy float in the lattice's steps
    import compiler as ss
    from compiler.trace import Trace
    A = ss.Tensor.from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]), "csr")
    trace = ss.lower("y[i] = max[j](A[i, j])", A=A).trace
    assert Trace.from_json(trace.to_json()).to_json() == trace.to_json()
