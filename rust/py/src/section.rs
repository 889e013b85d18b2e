//! Sections and filler blocks of one document (chunkmill_core::chunk::section).

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::section;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

/// (section number of every block, per section the position of its opening heading or
/// None): `levels` is each block's heading level, 0 for other blocks.
#[pyfunction]
fn sections(
    heading: Vec<bool>,
    levels: Vec<u8>,
    depth: Option<u8>,
) -> (Vec<u32>, Vec<Option<usize>>) {
    section::sections(&heading, &levels, depth)
}

/// Per block, whether it says nothing alone (comments, or a paragraph of link
/// definitions).
#[pyfunction]
fn fillers(py: Python<'_>, paragraph: Vec<bool>, texts: Vec<PyBackedStr>) -> PyResult<Vec<bool>> {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            paragraph
                .iter()
                .zip(&texts)
                .map(|(&p, t)| section::is_filler(p, t))
                .collect()
        }))
    })
    .map_err(|_| PyRuntimeError::new_err("fillers: the Rust core failed (a bug in chunkmill)"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sections, m)?)?;
    m.add_function(wrap_pyfunction!(fillers, m)?)?;
    Ok(())
}
