//! chunkmill._core.pack: the packer over a document's unit arrays.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::pack::{
    check, pack as core_pack, pack_full, Group, Limits, Parent, UnitArrays,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The flat groups: `starts` (len + 1 offsets into `units`), then per group its section,
/// overlap, image flag and tokens.
type Flat = (
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Vec<bool>,
    Vec<i64>,
);

/// The chunks of a document's units. `units` has the list attributes tokens, section,
/// heading, atomic, image, overlap_ok and filler (None, or empty: the headings are the
/// filler); `cap` is per section number (None: that number has no cap); `parents` per
/// section (-1: the document root, None: no parent), or None for no sibling packing.
/// `full`: never answer a lone section that fits its cap without the packer's passes (the
/// same groups, by the long way).
#[pyfunction]
#[pyo3(signature = (units, cap, target, min_tokens, overlap, parents=None, full=false))]
fn pack(
    units: &Bound<'_, PyAny>,
    cap: Vec<Option<i64>>,
    target: i64,
    min_tokens: i64,
    overlap: i64,
    parents: Option<Vec<Option<i64>>>,
    full: bool,
) -> PyResult<Flat> {
    let arrays = read(units)?;
    let u = arrays.units();
    if u.section
        .iter()
        .any(|&s| cap.get(s).is_none_or(|c| c.is_none()))
    {
        return Err(PyValueError::new_err("pack: a unit's section has no cap"));
    }
    // the caps of numbers no unit has are never read
    let cap: Vec<i64> = cap.into_iter().map(|c| c.unwrap_or(0)).collect();
    let lim = Limits {
        cap: &cap,
        target,
        min_tokens,
        overlap,
    };
    let parents = parents
        .map(|p| p.into_iter().map(parent).collect::<PyResult<Vec<_>>>())
        .transpose()?;
    let parents = parents.as_deref();
    check(&u, &lim, parents).map_err(|why| PyValueError::new_err(format!("pack: {why}")))?;
    let run = if full { pack_full } else { core_pack };
    let groups = units
        .py()
        .detach(|| catch_unwind(AssertUnwindSafe(|| run(&u, &lim, parents))))
        .map_err(|_| PyRuntimeError::new_err("pack: the Rust core failed (a bug in chunkmill)"))?;
    Ok(flat(groups))
}

/// The unit arrays, read from the Python object's lists (`filler` None or empty: the
/// headings, as `Units.filler or Units.heading` reads in Python).
fn read(units: &Bound<'_, PyAny>) -> PyResult<UnitArrays> {
    let flags = |name: &str| units.getattr(name)?.extract::<Vec<bool>>();
    let heading = flags("heading")?;
    let filler: Option<Vec<bool>> = units.getattr("filler")?.extract()?;
    Ok(UnitArrays {
        tokens: units.getattr("tokens")?.extract()?,
        section: units.getattr("section")?.extract()?,
        filler: filler
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| heading.clone()),
        heading,
        atomic: flags("atomic")?,
        image: flags("image")?,
        overlap_ok: flags("overlap_ok")?,
    })
}

fn parent(p: Option<i64>) -> PyResult<Option<Parent>> {
    match p {
        None => Ok(None),
        Some(-1) => Ok(Some(Parent::Root)),
        Some(s) => usize::try_from(s)
            .map(|s| Some(Parent::Section(s)))
            .map_err(|_| PyValueError::new_err(format!("pack: bad parent {s}"))),
    }
}

fn flat(groups: Vec<Group>) -> Flat {
    let n = groups.len();
    let mut out: Flat = (
        Vec::with_capacity(n + 1),
        Vec::new(),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    out.0.push(0);
    for g in groups {
        out.1.extend(g.units);
        out.0.push(out.1.len());
        out.2.push(g.section);
        out.3.push(g.overlap);
        out.4.push(g.image);
        out.5.push(g.tokens);
    }
    out
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pack, m)?)
}
