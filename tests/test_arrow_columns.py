"""pipeline/arrow_columns.py lays out the arrays pa.array would build, without importing pandas."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime, timedelta, timezone

import pyarrow as pa
import pytest

from chunkmill.pipeline import arrow_columns, schemas
from tests.helpers import fresh_python

CASES = {
    "strings": (pa.string(), ["a", "", None, "é文😀", "x" * 300]),
    "no strings": (pa.string(), []),
    "int64": (pa.int64(), [0, -1, None, 2**62, -(2**63)]),
    "int32": (pa.int32(), [1, None, -7]),
    "uint64": (pa.uint64(), [0, 2**64 - 1, 12345]),
    "booleans": (pa.bool_(), [True, False, None] * 5 + [True]),
    "lists": (pa.list_(pa.string()), [["a", "b"], [], None, ["ü"], [None, "c"]]),
    "maps": (pa.map_(pa.string(), pa.float64()), [[("read", 0.5), ("x", 2.0)], [], None]),
    "timestamps": (
        pa.timestamp("ms", tz="UTC"),
        [
            datetime(2026, 11, 22, 14, 3, 5, 987654, tzinfo=UTC),
            datetime(2026, 11, 22, 16, 3, 5, tzinfo=timezone(timedelta(hours=2))),
            None,
            datetime(1999, 1, 1, 0, 0, 0, 999),
        ],
    ),
    "timestamps in us": (pa.timestamp("us"), [datetime(2020, 2, 29, 23, 59, 59, 1), None]),
}


@pytest.mark.parametrize("case", CASES)
def test_a_column_equals_what_pa_array_builds(case):
    type_, values = CASES[case]
    built = arrow_columns.column(values, type_)
    built.validate(full=True)
    assert built.equals(pa.array(values, type=type_))
    assert built.to_pylist() == pa.array(values, type=type_).to_pylist()


def test_a_map_may_be_given_as_a_dict():
    type_ = pa.map_(pa.string(), pa.float64())
    assert arrow_columns.column([{"a": 1.0}], type_).equals(pa.array([[("a", 1.0)]], type=type_))


def test_the_runs_table_round_trips():
    record = {f.name: None for f in schemas.RUNS}
    record.update(
        run_id="r1",
        status="published",
        started_at=datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
        inputs=["a", "b"],
        full=False,
        seconds=[("read", 0.25)],
        documents_added=3,
    )
    rows = {f.name: [record[f.name]] for f in schemas.RUNS}
    built = arrow_columns.table(rows, schemas.RUNS)
    assert built.equals(pa.Table.from_pylist([record], schema=schemas.RUNS))


def test_an_unknown_type_is_refused():
    with pytest.raises(TypeError, match="no builder"):
        arrow_columns.column([1.5], pa.float32())


def test_no_pandas_is_imported():
    if importlib.util.find_spec("pandas") is None:
        pytest.skip("pandas is not installed here, so nothing could import it")
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "from chunkmill.pipeline import arrow_columns, schemas\n"
        "arrow_columns.table({n: [] for n in schemas.INPUTS.names}, schemas.INPUTS)\n"
        "arrow_columns.column([['a']], pa.list_(pa.string()))\n"
        "print('pandas' in sys.modules)\n"
    )
    assert fresh_python(code) == "False"


def test_the_dictionary_columns_are_columns_of_their_tables():
    """A column renamed in a schema and not in REPEATED would lose its dictionary silently."""
    from chunkmill.pipeline import schemas

    for table, names in schemas.REPEATED.items():
        assert names <= set(schemas.TABLES[table].names), (
            table,
            names - set(schemas.TABLES[table].names),
        )
