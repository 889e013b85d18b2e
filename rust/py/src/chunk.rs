//! chunkmill._core.chunk_documents: the chunks stage of a batch of documents in one call,
//! columns in and columns out (chunkmill_core::chunk).

use std::borrow::Cow;
use std::convert::Infallible;
use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::heading::clean_blocks;
use chunkmill_core::chunk::{chunk_document, Block, Counting, Doc, DocChunks, Failure, Policy};
use chunkmill_core::parse::kind::Kind;
use chunkmill_core::threads;
use chunkmill_core::tokens::estimate::{estimate, weights, EnglishDocument};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyDict};

use crate::encoding_named;
use crate::strings::{self, Column, ColumnArg, Utf8Column};

/// The weights of one bias and group.
pub(crate) type Weights = [f64; 23];

/// The estimate of one document's texts: prose weights judged by the document's language,
/// code weights by each text alone (chunk.Counting.for_document and for_kind).
struct Estimate {
    prose: Weights,
    code: Weights,
    english: EnglishDocument,
}

impl Counting for Estimate {
    type Error = Infallible;
    fn count(&mut self, code: bool, texts: &[&str]) -> Result<Vec<i64>, Infallible> {
        let (w, english) = match code {
            true => (&self.code, None),
            false => (&self.prose, self.english),
        };
        Ok(texts.iter().map(|t| estimate(t, w, english)).collect())
    }
    fn added(&self) -> i64 {
        0
    }
    fn is_estimate(&self) -> bool {
        true
    }
}

/// A real tokenizer: the Python callable `count(list[str]) -> list[int]` (the GIL held).
struct Tokenizer<'py> {
    count: Bound<'py, PyAny>,
    added: i64,
}

impl Counting for Tokenizer<'_> {
    type Error = PyErr;
    fn count(&mut self, _code: bool, texts: &[&str]) -> PyResult<Vec<i64>> {
        let out: Vec<i64> = self.count.call1((texts.to_vec(),))?.extract()?;
        if out.len() != texts.len() {
            return Err(PyValueError::new_err(
                "count returned a list of another length",
            ));
        }
        Ok(out)
    }
    fn added(&self) -> i64 {
        self.added
    }
    fn is_estimate(&self) -> bool {
        false
    }
}

/// Documents: doc_id, path, text (a str or a buffer of its UTF-8 bytes), plain-text
/// format, front matter title, field lines and the language of each (None: unknown).
type DocLists<'py> = (
    Vec<PyBackedStr>,
    Vec<PyBackedStr>,
    Vec<Bound<'py, PyAny>>,
    Vec<bool>,
    Vec<Option<PyBackedStr>>,
    Vec<Vec<PyBackedStr>>,
    Vec<Option<bool>>,
);

/// Blocks of all documents, each document's in a run, as columns read in place: `runs`
/// (first and end row of each document's blocks), then per block, Arrow buffers in native
/// order: block_index (int32), block_id and kind (string columns, strings::ColumnArg),
/// level (int32, -1 for none), text (a string column), char_start and char_end (int64),
/// line_start (int32), alt (a string column and a uint8 null flag per block), item_starts
/// (a list column: its n + 1 int32 offsets into its int32 values, and a uint8 null flag
/// per block), tokens (int32). No Python object per block.
type BlockColumns<'py> = (
    Vec<(usize, usize)>,
    Bound<'py, PyAny>,
    ColumnArg<'py>,
    ColumnArg<'py>,
    Bound<'py, PyAny>,
    ColumnArg<'py>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    (ColumnArg<'py>, Bound<'py, PyAny>),
    (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    Bound<'py, PyAny>,
);

/// The `n` fixed-width numbers of a buffer (`name` says which, in errors).
fn numbers<T, const N: usize>(
    obj: &Bound<'_, PyAny>,
    n: Option<usize>,
    name: &str,
    from: fn([u8; N]) -> T,
) -> PyResult<Vec<T>> {
    let held = PyUntypedBuffer::get(obj)?;
    let bytes = strings::bytes_of(&held)?;
    if bytes.len() % N != 0 || n.is_some_and(|n| bytes.len() != n * N) {
        return Err(PyValueError::new_err(format!(
            "chunk_documents: {name} has {} bytes, not {} numbers of {N}",
            bytes.len(),
            n.map_or("whole".to_owned(), |n| n.to_string())
        )));
    }
    Ok(bytes
        .chunks_exact(N)
        .map(|b| from(b.try_into().unwrap()))
        .collect())
}

/// The item starts of every block, one flat list, and each block's range of it (None for a
/// null list).
type ItemStarts = (Vec<i64>, Vec<Option<(usize, usize)>>);

/// Each block's item starts (None for a null list) as ranges of one flat list.
fn item_ranges(
    (offsets, values, nulls): &(Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>),
    n: usize,
) -> PyResult<ItemStarts> {
    let offsets = numbers(
        offsets,
        Some(n + 1),
        "item_starts offsets",
        i32::from_ne_bytes,
    )?;
    let values = numbers(values, None, "item_starts values", i32::from_ne_bytes)?;
    let nulls = numbers(nulls, Some(n), "item_starts nulls", u8::from_ne_bytes)?;
    let bad = || PyValueError::new_err("chunk_documents: bad item_starts offsets");
    let first = usize::try_from(offsets[0]).map_err(|_| bad())?;
    let mut ranges = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (usize::try_from(offsets[i]), usize::try_from(offsets[i + 1]));
        let (a, b) = a.ok().zip(b.ok()).ok_or_else(bad)?;
        if a < first || a > b || b > values.len() {
            return Err(bad());
        }
        ranges.push((nulls[i] == 0).then_some((a - first, b - first)));
    }
    let last = usize::try_from(offsets[n]).map_err(|_| bad())?;
    let flat = values[first..last].iter().map(|&v| i64::from(v)).collect();
    Ok((flat, ranges))
}

/// (rows, texts) of the reduced texts of headings with markup, (rows, sources) of image
/// blocks.
type Prepared = (
    (Vec<usize>, Vec<PyBackedStr>),
    (Vec<usize>, Vec<Option<PyBackedStr>>),
);

/// strategy, front matter dropped, heading_depth, pack_siblings, breadcrumb_prefix,
/// link_template, id_hash, chunker version, bias; then target, max, min and overlap tokens.
pub(crate) type PolicyTuple = (
    (String, bool, u8, bool, bool, String, String, String, String),
    (i64, i64, i64, i64),
);

/// The chunks of a batch. `tokenizer`: None for the estimate or `encoding` (a name of
/// chunkmill_core::tokens::exact, counted in the core), else (count, added) of a Python one.
/// Returns a dict of chunk columns (`doc`: the document index of each chunk; list columns
/// flat with offsets; `text` and `embed_text` as UTF-8 bytes with int64 `*_offsets`),
/// `rejects` [(doc, reason, detail)], and per chunk its document's `title` and
/// `strategy`: Python lists, or with `columnar` Arrow buffers (`Outcome::into_buffers`).
#[pyfunction]
#[pyo3(signature = (docs, blocks, prepared, policy, tokenizer=None, threads=1, columnar=false, encoding=None))]
#[allow(clippy::too_many_arguments)] // the arguments of the Python call, as it names them
fn chunk_documents<'py>(
    py: Python<'py>,
    docs: DocLists<'py>,
    blocks: BlockColumns<'py>,
    prepared: Prepared,
    policy: PolicyTuple,
    tokenizer: Option<(Bound<'py, PyAny>, i64)>,
    threads: usize,
    columnar: bool,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let encoding = encoding
        .map(|name| encoding_named(name, "chunk_documents"))
        .transpose()?;
    let n_docs = docs.0.len();
    let (starts, (plain_rows, image_rows)) = (&blocks.0, &prepared);
    let block_index = numbers(&blocks.1, None, "block_index", i32::from_ne_bytes)?;
    let n = block_index.len();
    let doc_held = strings::texts_of(&docs.2)?;
    let doc_texts = doc_held
        .iter()
        .map(|t| t.as_str("chunk_documents"))
        .collect::<PyResult<Vec<_>>>()?;
    let held: Vec<Column> = [&blocks.2, &blocks.3, &blocks.5, &blocks.9 .0]
        .into_iter()
        .map(Column::get)
        .collect::<PyResult<_>>()?;
    let [ids, kinds, block_texts, alts] = [0, 1, 2, 3].map(|c| held[c].texts("chunk_documents"));
    let (ids, kinds, block_texts, alts) = (ids?, kinds?, block_texts?, alts?);
    let level = numbers(&blocks.4, Some(n), "level", i32::from_ne_bytes)?;
    let char_start = numbers(&blocks.6, Some(n), "char_start", i64::from_ne_bytes)?;
    let char_end = numbers(&blocks.7, Some(n), "char_end", i64::from_ne_bytes)?;
    let line_start = numbers(&blocks.8, Some(n), "line_start", i32::from_ne_bytes)?;
    let no_alt = numbers(&blocks.9 .1, Some(n), "alt nulls", u8::from_ne_bytes)?;
    let (items, item_at) = item_ranges(&blocks.10, n)?;
    let tokens = numbers(&blocks.11, Some(n), "tokens", i32::from_ne_bytes)?;
    if starts.len() != n_docs || starts.iter().any(|&(a, b)| a > b || b > n) {
        return Err(PyValueError::new_err("chunk_documents: bad block runs"));
    }
    if [ids.len(), kinds.len(), block_texts.len(), alts.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(PyValueError::new_err(
            "chunk_documents: block columns differ in length",
        ));
    }
    let mut plain: Vec<Option<&str>> = vec![None; n];
    for (&r, t) in plain_rows.0.iter().zip(&plain_rows.1) {
        *plain
            .get_mut(r)
            .ok_or_else(|| PyValueError::new_err("bad plain row"))? = Some(t);
    }
    let mut image_src: Vec<Option<&str>> = vec![None; n];
    for (&r, t) in image_rows.0.iter().zip(&image_rows.1) {
        *image_src
            .get_mut(r)
            .ok_or_else(|| PyValueError::new_err("bad image row"))? = t.as_deref();
    }
    let bad = |what: &str| PyValueError::new_err(format!("chunk_documents: bad {what}"));
    let all: Vec<Block> = (0..n)
        .map(|i| {
            Ok(Block {
                block_index: i64::from(block_index[i]),
                block_id: Cow::Borrowed(ids[i]),
                kind: *Kind::ALL
                    .iter()
                    .find(|k| k.name() == kinds[i])
                    .ok_or_else(|| bad("kind"))?,
                level: match level[i] {
                    -1 => None,
                    l => Some(u8::try_from(l).map_err(|_| bad("level"))?),
                },
                text: block_texts[i],
                char_start: usize::try_from(char_start[i]).map_err(|_| bad("char_start"))?,
                char_end: usize::try_from(char_end[i]).map_err(|_| bad("char_end"))?,
                line_start: i64::from(line_start[i]),
                alt: (no_alt[i] == 0).then_some(alts[i]),
                item_starts: item_at[i].map(|(a, b)| &items[a..b]),
                tokens: i64::from(tokens[i]),
                plain: plain[i],
                image_src: image_src[i],
            })
        })
        .collect::<PyResult<_>>()?;
    let (policy, prose, code) = policy_of(&policy)?;
    let doc = |d: usize| {
        let title = docs.4[d].as_deref();
        doc_of(
            &docs.0[d],
            &docs.1[d],
            doc_texts[d],
            docs.3[d],
            title,
            &docs.5[d],
        )
    };
    let mut out = Outcome::default();
    match tokenizer {
        None if encoding.is_some() => {
            let e = encoding.expect("an encoding");
            let results = chunk_natively(py, &doc, &all, starts, &policy, &|_| e.clone(), threads);
            for (d, r) in results.into_iter().enumerate() {
                out.add(d, r);
            }
        }
        None => {
            let results = chunk_estimated(
                py,
                &doc,
                &all,
                starts,
                &docs.6,
                &policy,
                (prose, code),
                threads,
            );
            for (d, r) in results.into_iter().enumerate() {
                out.add(d, r);
            }
        }
        Some((count, added)) => {
            let mut tok = Tokenizer { count, added };
            for d in 0..n_docs {
                let r = guarded(|| {
                    chunk_document(&doc(d), &all[starts[d].0..starts[d].1], &policy, &mut tok)
                });
                let r = r.map(|r| {
                    r.map_err(|f| {
                        f.map_count(|e: PyErr| format!("{}: {}", type_name(py, &e), e.value(py)))
                    })
                });
                out.add(d, r);
            }
        }
    }
    if columnar {
        out.into_buffers(py)
    } else {
        out.into_dict(py)
    }
}

/// A document as the core takes it, from the values of the Python call's lists.
pub(crate) fn doc_of<'a>(
    doc_id: &'a str,
    path: &'a str,
    text: &'a str,
    plain_text: bool,
    front_matter_title: Option<&'a str>,
    fields: &'a [PyBackedStr],
) -> Doc<'a> {
    Doc {
        doc_id,
        path,
        text,
        plain_text,
        front_matter_title,
        fields: fields.iter().map(|f| &**f).collect(),
    }
}

/// The core's policy of the Python call's tuple, and the estimate's prose and code weights.
pub(crate) fn policy_of(policy: &PolicyTuple) -> PyResult<(Policy<'_>, Weights, Weights)> {
    let (
        (
            strategy,
            drop_front_matter,
            heading_depth,
            pack_siblings,
            context,
            link_template,
            id_hash,
            chunker_version,
            bias,
        ),
        (target, max, min, overlap),
    ) = policy;
    let (prose, code) = weights(bias, false)
        .zip(weights(bias, true))
        .ok_or_else(|| PyValueError::new_err(format!("unknown bias {bias:?}")))?;
    let policy = Policy {
        strategy,
        drop_front_matter: *drop_front_matter,
        heading_depth: *heading_depth,
        pack_siblings: *pack_siblings,
        target: *target,
        max: *max,
        min: *min,
        overlap: *overlap,
        context: *context,
        link_template,
        id_hash,
        chunker_version,
    };
    Ok((policy, prose, code))
}

/// Every document chunked under the estimate, which needs no interpreter (`english[d]`:
/// whether document d reads as English): `chunk_natively` with the estimate's counter.
#[allow(clippy::too_many_arguments)] // the parts of one batch, as both callers hold them
pub(crate) fn chunk_estimated<'a>(
    py: Python<'_>,
    doc: &(dyn Fn(usize) -> Doc<'a> + Sync),
    all: &[Block],
    starts: &[(usize, usize)],
    english: &[Option<bool>],
    policy: &Policy,
    (prose, code): (Weights, Weights),
    threads: usize,
) -> Vec<Result1> {
    let counter = |d: usize| Estimate {
        prose,
        code,
        english: english[d],
    };
    chunk_natively(py, doc, all, starts, policy, &counter, threads)
}

/// Every document chunked with a counter that needs no interpreter (`counter(d)`: document
/// d's): the documents are spread over threads (contiguous ranges by text size, results
/// in document order: the same for any number). `doc(d)`: document d; `starts[d]`: its
/// rows of `all`.
pub(crate) fn chunk_natively<'a, C: Counting<Error: std::fmt::Display>>(
    py: Python<'_>,
    doc: &(dyn Fn(usize) -> Doc<'a> + Sync),
    all: &[Block],
    starts: &[(usize, usize)],
    policy: &Policy,
    counter: &(dyn Fn(usize) -> C + Sync),
    threads: usize,
) -> Vec<Result1> {
    let sizes: Vec<usize> = (0..starts.len()).map(|d| doc(d).text.len()).collect();
    let ranges = threads::ranges(&sizes, threads);
    py.detach(|| {
        threads::map(&ranges, |range| {
            range
                .map(|d| {
                    let mut counting = counter(d);
                    guarded(|| {
                        chunk_document(
                            &doc(d),
                            &all[starts[d].0..starts[d].1],
                            policy,
                            &mut counting,
                        )
                    })
                    .map(|r| r.map_err(|f| f.map_count(|e| e.to_string())))
                })
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect()
    })
}

fn type_name(py: Python<'_>, e: &PyErr) -> String {
    e.get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into())
}

/// `f()`, None when it panicked.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// What one document gave, its counter's failure already made text.
pub(crate) type Result1 = Option<Result<DocChunks, Failure<String>>>;

trait MapCount<E> {
    fn map_count<F>(self, f: impl FnOnce(E) -> F) -> Failure<F>;
}

impl<E> MapCount<E> for Failure<E> {
    fn map_count<F>(self, f: impl FnOnce(E) -> F) -> Failure<F> {
        match self {
            Failure::OverCap(s) => Failure::OverCap(s),
            Failure::Internal(s) => Failure::Internal(s),
            Failure::Count(e) => Failure::Count(f(e)),
        }
    }
}

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

/// Per heading block text: its cleaned inline source when that still has markup for the
/// reference inline parser to reduce, else None.
#[pyfunction]
fn heading_markup(py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<Vec<Option<String>>> {
    py.detach(|| {
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        guarded(|| clean_blocks(&texts))
    })
    .map(|c| {
        c.into_iter()
            .map(|c| (!c.plain).then_some(c.text))
            .collect()
    })
    .ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "heading_markup: the Rust core failed (a bug in chunkmill)",
        )
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunk_documents, m)?)?;
    m.add_function(wrap_pyfunction!(heading_markup, m)?)?;
    Ok(())
}
