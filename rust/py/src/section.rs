//! Sections, leads and filler blocks of one document (mdchunk_core::section).

use std::panic::{catch_unwind, AssertUnwindSafe};

use mdchunk_core::pack::Parent;
use mdchunk_core::section;
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

/// Per section, its parent section (-1 at the top, None for a preamble).
#[pyfunction]
fn parents(levels: Vec<Option<u8>>) -> Vec<Option<i64>> {
    section::parents(&levels)
        .into_iter()
        .map(|p| {
            p.map(|p| match p {
                Parent::Root => -1,
                Parent::Section(s) => s as i64,
            })
        })
        .collect()
}

/// Per block, the tokens that lead it in its heading's chunk.
#[pyfunction]
fn leads(heading: Vec<bool>, numbers: Vec<u32>, tokens: Vec<i64>, small: i64) -> Vec<i64> {
    section::leads(&heading, &numbers, &tokens, small)
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
    .map_err(|_| PyRuntimeError::new_err("fillers: the Rust core failed (a bug in mdchunk)"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sections, m)?)?;
    m.add_function(wrap_pyfunction!(parents, m)?)?;
    m.add_function(wrap_pyfunction!(leads, m)?)?;
    m.add_function(wrap_pyfunction!(fillers, m)?)?;
    Ok(())
}
