//! String columns read in place: an Arrow string column comes in as its buffers (UTF-8
//! bytes and offsets, through the buffer protocol), so no Python string, and no UTF-8 copy
//! of one, is made per text.

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyString};

/// The bytes of a C-contiguous buffer (an Arrow `pa.Buffer`, `bytes`, ...).
pub fn bytes_of(buffer: &PyUntypedBuffer) -> PyResult<&[u8]> {
    if !buffer.is_c_contiguous() {
        return Err(PyValueError::new_err("a buffer is not contiguous"));
    }
    if buffer.len_bytes() == 0 {
        return Ok(&[]);
    }
    // SAFETY: the buffer stays acquired (its exporter keeps the memory) while `buffer`
    // lives, and the slice borrows `buffer`. Arrow buffers are immutable once built.
    Ok(unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes()) })
}

/// A text as Python hands it over: a str, or a buffer of its UTF-8 bytes (a view of an
/// Arrow column's data, read in place).
pub enum Text {
    Str(PyBackedStr),
    Utf8(PyUntypedBuffer),
}

impl Text {
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        match obj.cast::<PyString>() {
            Ok(s) => Ok(Text::Str(s.to_owned().try_into()?)),
            Err(_) => Ok(Text::Utf8(PyUntypedBuffer::get(obj)?)),
        }
    }

    /// Its text (`name` says whose, in the error).
    pub fn as_str(&self, name: &str) -> PyResult<&str> {
        match self {
            Text::Str(s) => Ok(s),
            Text::Utf8(b) => std::str::from_utf8(bytes_of(b)?)
                .map_err(|_| PyValueError::new_err(format!("{name}: text is not UTF-8"))),
        }
    }
}

/// The texts of `objs` (see `Text`).
pub fn texts_of(objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Text>> {
    objs.iter().map(Text::get).collect()
}

/// The `n` texts of an Arrow string column: `data` its UTF-8 bytes, `offsets` its n + 1
/// offsets into them (int64 when `wide`, int32 otherwise; native order), already sliced
/// to the array's first row.
pub fn texts<'a>(
    name: &str,
    data: &'a [u8],
    offsets: &[u8],
    wide: bool,
    n: usize,
) -> PyResult<Vec<&'a str>> {
    let fail = |why: &str| PyValueError::new_err(format!("{name}: {why}"));
    let width = if wide { 8 } else { 4 };
    if offsets.len() < width * (n + 1) {
        return Err(fail("fewer offsets than rows"));
    }
    let at = |i: usize| -> Option<usize> {
        let b = &offsets[width * i..width * (i + 1)];
        if wide {
            usize::try_from(i64::from_ne_bytes(b.try_into().unwrap())).ok()
        } else {
            usize::try_from(i32::from_ne_bytes(b.try_into().unwrap())).ok()
        }
    };
    let (first, last) = at(0).zip(at(n)).ok_or_else(|| fail("a negative offset"))?;
    let span = data
        .get(first..last)
        .ok_or_else(|| fail("an offset is out of bounds"))?;
    let all = std::str::from_utf8(span).map_err(|_| fail("text is not UTF-8"))?;
    (0..n)
        .map(|i| {
            at(i)
                .zip(at(i + 1))
                .and_then(|(a, b)| all.get(a.checked_sub(first)?..b.checked_sub(first)?))
                .ok_or_else(|| fail("an offset is out of bounds"))
        })
        .collect()
}

/// A string column as Python hands it over: (data, offsets, wide, n), see `texts`.
pub type ColumnArg<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, bool, usize);

/// The buffers of a string column, held while its texts are read.
pub struct Column {
    data: PyUntypedBuffer,
    offsets: PyUntypedBuffer,
    wide: bool,
    n: usize,
}

impl Column {
    pub fn get((data, offsets, wide, n): &ColumnArg<'_>) -> PyResult<Self> {
        Ok(Column {
            data: PyUntypedBuffer::get(data)?,
            offsets: PyUntypedBuffer::get(offsets)?,
            wide: *wide,
            n: *n,
        })
    }

    /// Its texts, borrowed from its buffers.
    pub fn texts(&self, name: &str) -> PyResult<Vec<&str>> {
        texts(
            name,
            bytes_of(&self.data)?,
            bytes_of(&self.offsets)?,
            self.wide,
            self.n,
        )
    }
}

/// Many texts one after the other as one UTF-8 buffer, with the start of each (an Arrow
/// large_string column once the end is added).
#[derive(Default)]
pub struct Utf8Column {
    pub data: Vec<u8>,
    pub starts: Vec<i64>,
}

impl Utf8Column {
    pub fn push(&mut self, text: &str) {
        self.starts.push(self.data.len() as i64);
        self.data.extend_from_slice(text.as_bytes());
    }

    /// The n + 1 offsets in native byte order (the starts and the end).
    pub fn offsets(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * (self.starts.len() + 1));
        for &s in &self.starts {
            out.extend_from_slice(&s.to_ne_bytes());
        }
        out.extend_from_slice(&(self.data.len() as i64).to_ne_bytes());
        out
    }
}

/// A column of fixed-width numbers as bytes in native order (an Arrow data buffer).
pub fn buffer<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_bytes: fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to_bytes(v));
    }
    PyBytes::new(py, &out)
}
