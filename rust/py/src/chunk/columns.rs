//! The chunks of a batch as chunk columns: each document's rows (or its reject) gathered,
//! then handed to Python as lists or as Arrow buffers.

use chunkmill_core::chunk::{DocChunks, Failure};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::batch::Result1;
use crate::strings::{self, Utf8Column};

#[derive(Default)]
pub(crate) struct Outcome {
    doc: Vec<usize>,
    chunk_index: Vec<usize>,
    chunk_id: Vec<String>,
    chunk_type: Vec<&'static str>,
    name: Vec<String>,
    breadcrumb: Vec<String>,
    breadcrumb_at: Vec<usize>,
    header_level: Vec<Option<u8>>,
    section_title: Vec<Option<String>>,
    anchor: Vec<Option<String>>,
    url: Vec<Option<String>>,
    headings: Vec<String>,
    headings_at: Vec<usize>,
    text: Utf8Column,
    embed_text: Utf8Column,
    embed_hash: Vec<String>,
    image_src: Vec<Option<String>>,
    n_tokens: Vec<i64>,
    overlap_tokens: Vec<i64>,
    block_start: Vec<i64>,
    block_end: Vec<i64>,
    block_ids: Vec<String>,
    block_ids_at: Vec<usize>,
    span_start: Vec<usize>,
    span_end: Vec<usize>,
    spans_at: Vec<usize>,
    is_slice: Vec<bool>,
    line_start: Vec<usize>,
    line_end: Vec<usize>,
    part: Vec<usize>,
    parts: Vec<usize>,
    strategy: Vec<&'static str>,
    title: Vec<String>,
    rejects: Vec<(usize, &'static str, String)>,
}

/// A document's chunks, or its reject: (reason, detail).
pub(crate) fn settled(r: Result1) -> Result<DocChunks, (&'static str, String)> {
    match r {
        None => Err((
            "internal_error",
            "RuntimeError: the Rust core failed (a bug in chunkmill)".to_owned(),
        )),
        Some(Err(Failure::OverCap(detail))) => Err(("over_cap", detail)),
        Some(Err(Failure::Internal(why) | Failure::Count(why))) => {
            Err(("internal_error", format!("{why} (a bug in chunkmill)")))
        }
        Some(Ok(done)) => Ok(done),
    }
}

impl Outcome {
    pub(crate) fn add(&mut self, d: usize, r: Result1) {
        let done = match settled(r) {
            Ok(done) => done,
            Err((reason, detail)) => return self.rejects.push((d, reason, detail)),
        };
        for (i, r) in done.rows.into_iter().enumerate() {
            self.doc.push(d);
            self.chunk_index.push(i);
            self.strategy.push(done.strategy);
            self.title.push(done.title.clone());
            self.chunk_id.push(r.chunk_id);
            self.chunk_type.push(r.chunk_type);
            self.name.push(r.name);
            self.breadcrumb_at.push(self.breadcrumb.len());
            self.breadcrumb.extend(r.breadcrumb);
            self.header_level.push(r.header_level);
            self.section_title.push(r.section_title);
            self.anchor.push(r.anchor);
            self.url.push(r.url);
            self.headings_at.push(self.headings.len());
            self.headings.extend(r.headings);
            self.text.push(&r.text);
            self.embed_text.push(&r.embed_text);
            self.embed_hash.push(r.embed_hash);
            self.image_src.push(r.image_src);
            self.n_tokens.push(r.n_tokens);
            self.overlap_tokens.push(r.overlap_tokens);
            self.block_start.push(r.block_start);
            self.block_end.push(r.block_end);
            self.block_ids_at.push(self.block_ids.len());
            self.block_ids.extend(r.block_ids);
            self.spans_at.push(self.span_start.len());
            for (s, e) in r.spans {
                self.span_start.push(s);
                self.span_end.push(e);
            }
            self.is_slice.push(r.is_slice);
            self.line_start.push(r.line_start);
            self.line_end.push(r.line_end);
            self.part.push(r.part);
            self.parts.push(r.parts);
        }
    }

    /// The columns as Arrow buffers in native order, no Python object per chunk: numbers
    /// (int32; `doc` uint32, spans int64), strings as (data, int32 offsets) with a uint8
    /// null flag per value where a column has nulls (section_title, anchor, url, image_src),
    /// list columns as their values and int32 `*_at` offsets, `header_level` as int8
    /// values and null flags, `is_slice` one byte per chunk; text and embed_text as
    /// `into_dict` gives them.
    pub(crate) fn into_buffers(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        self.breadcrumb_at.push(self.breadcrumb.len());
        self.headings_at.push(self.headings.len());
        self.block_ids_at.push(self.block_ids.len());
        self.spans_at.push(self.span_start.len());
        let out = PyDict::new(py);
        let doc: Vec<u32> = to_int(&self.doc, "doc")?;
        out.set_item("doc", strings::buffer(py, &doc, u32::to_ne_bytes))?;
        macro_rules! int32 {
            ($($f:ident),*) => { $(
                let v: Vec<i32> = to_int(&self.$f, stringify!($f))?;
                out.set_item(stringify!($f), strings::buffer(py, &v, i32::to_ne_bytes))?;
            )* };
        }
        int32!(
            chunk_index,
            n_tokens,
            overlap_tokens,
            block_start,
            block_end,
            line_start,
            line_end,
            part,
            parts,
            breadcrumb_at,
            headings_at,
            block_ids_at,
            spans_at
        );
        for (name, v) in [
            ("span_start", &self.span_start),
            ("span_end", &self.span_end),
        ] {
            let v: Vec<i64> = to_int(v, name)?;
            out.set_item(name, strings::buffer(py, &v, i64::to_ne_bytes))?;
        }
        let level: Vec<i8> = self
            .header_level
            .iter()
            .map(|l| l.map_or(0, |l| l as i8))
            .collect();
        let no_level = flags(self.header_level.iter().map(Option::is_none));
        out.set_item("header_level", strings::buffer(py, &level, i8::to_ne_bytes))?;
        out.set_item("header_level_nulls", PyBytes::new(py, &no_level))?;
        out.set_item(
            "is_slice",
            PyBytes::new(py, &flags(self.is_slice.iter().copied())),
        )?;
        macro_rules! texts {
            ($($f:ident),*) => { $(
                out.set_item(stringify!($f), utf8(py, self.$f.iter().map(|s| Some(&**s)))?)?;
            )* };
        }
        texts!(
            chunk_id, chunk_type, name, breadcrumb, headings, embed_hash, block_ids, strategy,
            title
        );
        macro_rules! nullable {
            ($($f:ident),*) => { $(
                out.set_item(stringify!($f), utf8(py, self.$f.iter().map(|s| s.as_deref()))?)?;
                let nulls = flags(self.$f.iter().map(Option::is_none));
                out.set_item(concat!(stringify!($f), "_nulls"), PyBytes::new(py, &nulls))?;
            )* };
        }
        nullable!(section_title, anchor, url, image_src);
        out.set_item("rejects", self.rejects)?;
        put_texts(&out, self.text, self.embed_text)?;
        Ok(out)
    }

    pub(crate) fn into_dict(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        self.breadcrumb_at.push(self.breadcrumb.len());
        self.headings_at.push(self.headings.len());
        self.block_ids_at.push(self.block_ids.len());
        self.spans_at.push(self.span_start.len());
        let out = PyDict::new(py);
        macro_rules! put {
            ($($f:ident),*) => { $( out.set_item(stringify!($f), self.$f)?; )* };
        }
        put!(
            doc,
            chunk_index,
            chunk_id,
            chunk_type,
            name,
            breadcrumb,
            breadcrumb_at,
            header_level,
            section_title,
            anchor,
            url,
            headings,
            headings_at,
            embed_hash,
            image_src,
            n_tokens,
            overlap_tokens,
            block_start,
            block_end,
            block_ids,
            block_ids_at,
            span_start,
            span_end,
            spans_at,
            is_slice,
            line_start,
            line_end,
            part,
            parts,
            strategy,
            title,
            rejects
        );
        put_texts(&out, self.text, self.embed_text)?;
        Ok(out)
    }
}

/// `text` and `embed_text` as UTF-8 bytes with int64 `*_offsets`, in either layout.
fn put_texts(out: &Bound<'_, PyDict>, text: Utf8Column, embed_text: Utf8Column) -> PyResult<()> {
    let py = out.py();
    for (name, column) in [("text", text), ("embed_text", embed_text)] {
        out.set_item(
            format!("{name}_offsets"),
            PyBytes::new(py, &column.offsets()),
        )?;
        out.set_item(name, PyBytes::new(py, &column.data))?;
    }
    Ok(())
}

/// Numbers converted to a narrower type, or an error naming the column.
fn to_int<T: Copy, U: TryFrom<T>>(values: &[T], name: &str) -> PyResult<Vec<U>> {
    values
        .iter()
        .map(|&v| U::try_from(v))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err(format!("chunk_documents: {name} out of range")))
}

/// One byte per value: 1 where `set`.
fn flags(set: impl Iterator<Item = bool>) -> Vec<u8> {
    set.map(u8::from).collect()
}

/// Strings (None as empty) as an Arrow string column's (data, int32 offsets) buffers.
pub(crate) fn utf8<'a, 'py>(
    py: Python<'py>,
    values: impl Iterator<Item = Option<&'a str>>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (mut data, mut offsets) = (Vec::new(), vec![0i32]);
    for v in values {
        data.extend_from_slice(v.unwrap_or("").as_bytes());
        let end = i32::try_from(data.len())
            .map_err(|_| PyValueError::new_err("a string column over 2 GiB"))?;
        offsets.push(end);
    }
    Ok((
        PyBytes::new(py, &data),
        strings::buffer(py, &offsets, i32::to_ne_bytes),
    ))
}
