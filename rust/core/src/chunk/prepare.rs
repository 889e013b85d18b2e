//! A document's context: clean heading texts, the heading path of every block, heading
//! anchors numbered in document order, and the title.

use super::{Block, Doc, Policy};
use crate::chunk::context::path_title;
use crate::chunk::heading::{clean_blocks, titles_and_anchors};
use crate::parse::kind::Kind;
use crate::pyunicode::is_space;

/// One document's context.
pub struct Context {
    pub title: String,
    pub fields: Vec<String>,
    /// the policy wants a context header
    pub on: bool,
    /// heading paths: `paths[0]` is the empty path of blocks before any heading, then one
    /// per heading block in order
    pub paths: Vec<Vec<String>>,
    /// per block (of the kept blocks): the index of its path in `paths`
    pub path_of: Vec<usize>,
    /// per block: the anchor of a heading block
    pub anchors: Vec<Option<String>>,
    /// per block: a heading's clean text before it is cut as a title (its embedding form)
    pub clean: Vec<Option<String>>,
}

/// A block with its heading path (an index into `Context::paths`).
#[derive(Clone)]
pub struct DocBlock<'a> {
    pub block: Block<'a>,
    pub path: usize,
    /// its position among the kept blocks (None for the fixed strategy's whole body)
    pub pos: Option<usize>,
}

impl<'a> std::ops::Deref for DocBlock<'a> {
    type Target = Block<'a>;
    fn deref(&self) -> &Block<'a> {
        &self.block
    }
}

/// The context of a document's kept blocks.
pub fn prepare(doc: &Doc, blocks: &[Block], policy: &Policy) -> Context {
    let heads: Vec<usize> = (0..blocks.len())
        .filter(|&i| blocks[i].kind == Kind::Heading)
        .collect();
    let texts: Vec<&str> = heads.iter().map(|&i| blocks[i].text).collect();
    let cleaned = clean_blocks(&texts);
    let full: Vec<String> = cleaned
        .iter()
        .zip(&heads)
        .map(|(c, &i)| match c.plain {
            true => c.text.clone(),
            false => blocks[i].plain.unwrap_or_default().to_owned(),
        })
        .collect();
    let named = titles_and_anchors(
        full.iter()
            .cloned()
            .zip(cleaned.into_iter().map(|c| c.explicit))
            .collect(),
    );
    let n = blocks.len();
    let (mut anchors, mut clean) = (vec![None; n], vec![None; n]);
    let mut titles: Vec<Option<&str>> = vec![None; n];
    for (k, &i) in heads.iter().enumerate() {
        anchors[i] = Some(named.anchors[k].clone());
        clean[i] = Some(full[k].clone());
        titles[i] = Some(named.texts[k].as_str());
    }
    let (paths, path_of) = paths(blocks, &titles);
    let h1 = top_heading(blocks, &heads, &titles);
    let title = match (doc.front_matter_title, h1) {
        (Some(t), _) => t.to_owned(),
        (None, Some(h)) if !h.is_empty() => h.to_owned(),
        _ => path_title(doc.path),
    };
    let on = policy.context;
    let fields = doc.fields.iter().map(|f| f.to_string()).collect();
    Context {
        title,
        fields,
        on,
        paths,
        path_of,
        anchors,
        clean,
    }
}

/// The heading path of every block: the titles of the headings above it, each heading
/// closing those of its level and deeper.
fn paths(blocks: &[Block], titles: &[Option<&str>]) -> (Vec<Vec<String>>, Vec<usize>) {
    let mut paths = vec![Vec::new()];
    let mut stack: Vec<(u8, &str)> = Vec::new();
    let mut at = 0;
    let mut path_of = Vec::with_capacity(blocks.len());
    for (b, title) in blocks.iter().zip(titles) {
        if let (Kind::Heading, Some(title)) = (b.kind, title) {
            let level = b.level.unwrap_or(0);
            while stack.last().is_some_and(|&(l, _)| l >= level) {
                stack.pop();
            }
            stack.push((level, title));
            paths.push(stack.iter().map(|&(_, t)| t.to_owned()).collect());
            at = paths.len() - 1;
        }
        path_of.push(at);
    }
    (paths, path_of)
}

/// The first H1; else the first heading when no other has its level or a higher one, or
/// when the document opens with it and no heading outranks it.
fn top_heading<'t>(
    blocks: &[Block],
    heads: &[usize],
    titles: &[Option<&'t str>],
) -> Option<&'t str> {
    let level = |i: usize| blocks[i].level.unwrap_or(0);
    if let Some(&i) = heads.iter().find(|&&i| level(i) == 1) {
        return titles[i];
    }
    let &first = heads.first()?;
    let top = heads.iter().map(|&i| level(i)).min()?;
    let alone = heads.iter().filter(|&&i| level(i) == top).count() == 1;
    if level(first) == top && (alone || opening(blocks) == Some(first)) {
        return titles[first];
    }
    None
}

/// The first block that is not front matter, an MDX import or an HTML comment.
fn opening(blocks: &[Block]) -> Option<usize> {
    blocks.iter().position(|b| match b.kind {
        Kind::FrontMatter | Kind::MdxEsm => false,
        Kind::Html => !b.text.trim_start_matches(is_space).starts_with("<!--"),
        _ => true,
    })
}

/// The blocks with their paths.
pub fn with_paths<'a>(blocks: &[Block<'a>], ctx: &Context) -> Vec<DocBlock<'a>> {
    blocks
        .iter()
        .zip(&ctx.path_of)
        .enumerate()
        .map(|(pos, (b, &path))| DocBlock {
            block: b.clone(),
            path,
            pos: Some(pos),
        })
        .collect()
}
