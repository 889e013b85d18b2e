//! Heading text as readers see it, and the anchors that link to it.
//!
//! `clean` turns the inline source of an ATX or setext heading into its text: heading-id
//! attributes (`{#id}`, `{: #id .class}`, MDX `{/*id*/}`), template tags (Hugo
//! `{{< >}}`/`{{% %}}`, Liquid/Jinja `{% %}`/`{{ }}`) and closing `#`s are removed. Text
//! whose only markup is code spans is reduced here as the reference inline parser reduces
//! it; text with other inline markup is left to that parser (`Cleaned::plain` is false);
//! other text has its whitespace collapsed. `Anchors` numbers GitHub slugs of a document.
//!
//! - `syntax`: what a heading's text loses: closing `#`s, template tags, MDX ids, attribute
//!   lists.
//! - `code_spans`: text whose only markup is code spans, reduced as the reference inline
//!   parser reduces it.
//! - `anchor`: GitHub's slugs of heading texts, numbered per document.

mod anchor;
mod code_spans;
mod syntax;

pub use anchor::{kept, slug, Anchors};

use crate::parse::TITLE_CHARS;
use crate::pyunicode::{collapse, rstrip, strip};
use syntax::{attributes, id_in_attributes, is_blank, mdx_id, untemplated, without_closing};

/// The longest heading source (in code points) that is cleaned: a bounded prefix.
pub const TITLE_SOURCE_CHARS: usize = 2000;
const MARKUP: &[char] = &['*', '_', '`', '[', ']', '<', '>', '&', '\\', '!', '~'];

/// The inline content of a heading block: ATX markers or the setext underline removed.
pub fn source(block: &str) -> String {
    let block = block.trim_matches(['\r', '\n']);
    let lines = eol_split(block);
    let first = lines[0];
    if let Some(open) = atx_open(first) {
        return strip(&without_closing(strip(&first[open..]))).to_owned();
    }
    let body: Vec<&str> = lines[..lines.len() - 1].iter().map(|l| strip(l)).collect();
    body.join(" ")
}

/// `re.split(r"\r\n|\r|\n", text)`
fn eol_split(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let (mut out, mut start, mut i) = (Vec::new(), 0, 0);
    while i < bytes.len() {
        if bytes[i] == b'\n' || bytes[i] == b'\r' {
            out.push(&text[start..i]);
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// `^ {0,3}#{1,6}(?=[ \t]|$)` on a line: the end of the opening marker.
fn atx_open(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let spaces = b.iter().take_while(|&&c| c == b' ').count();
    if spaces > 3 {
        return None;
    }
    let hashes = b[spaces..].iter().take_while(|&&c| c == b'#').count();
    let end = spaces + hashes;
    let next_ok = match b.get(end) {
        None => true,
        Some(&c) => is_blank(c) || (c == b'\n' && end + 1 == b.len()),
    };
    ((1..=6).contains(&hashes) && next_ok).then_some(end)
}

/// A cleaned heading: its text, and the explicit id it carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaned {
    /// plain text when `plain`, else inline markdown for the reference inline parser
    pub text: String,
    pub explicit: Option<String>,
    pub plain: bool,
}

/// Text and explicit id of a heading's inline source (see `source`).
pub fn clean(inline: &str) -> Cleaned {
    let untemplated = untemplated(inline);
    let mut text = strip(&untemplated).to_owned();
    let mut explicit: Option<String> = None;
    loop {
        let before_len = text.len();
        if let Some((cut, id)) = mdx_id(&text) {
            if explicit.is_none() && !id.is_empty() {
                explicit = Some(id.to_owned());
            }
            text.truncate(cut);
        }
        if let Some((cut, attrs)) = attributes(&text) {
            if explicit.is_none() {
                explicit = id_in_attributes(attrs).map(str::to_owned);
            }
            text.truncate(cut);
        }
        if text.len() == before_len {
            break;
        }
        text = rstrip(&without_closing(&text)).to_owned();
    }
    match plain_text(&text) {
        Some(plain) => Cleaned {
            text: plain,
            explicit,
            plain: true,
        },
        None => Cleaned {
            text,
            explicit,
            plain: false,
        },
    }
}

/// The text of inline source without markup characters (its whitespace collapsed) or
/// whose only markup is code spans (see `code_spans`), or None when it has other markup
/// (the reference inline parser reduces those).
pub fn plain_text(inline: &str) -> Option<String> {
    if !inline.contains(MARKUP) {
        return Some(collapse(inline));
    }
    code_spans::reduced(inline, MARKUP)
}

/// A heading text as a title: at most TITLE_CHARS code points, a cut one ends with "…".
pub fn title(text: String) -> String {
    match text.char_indices().nth(TITLE_CHARS) {
        None => text,
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(TITLE_CHARS - 1)
                .map_or(text.len(), |(i, _)| i);
            format!("{}…", rstrip(&text[..cut]))
        }
    }
}

/// The first `n` code points of `text`.
pub fn prefix(text: &str, n: usize) -> &str {
    text.char_indices().nth(n).map_or(text, |(i, _)| &text[..i])
}

/// Every heading block of one document cleaned (the first TITLE_SOURCE_CHARS code points
/// of its source: a 50 kB heading is still a breadcrumb element).
pub fn clean_blocks(blocks: &[&str]) -> Vec<Cleaned> {
    blocks
        .iter()
        .map(|b| clean(prefix(&source(b), TITLE_SOURCE_CHARS)))
        .collect()
}

/// One document's headings, in document order: titles (see `title`), explicit ids, anchors.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Headings {
    pub texts: Vec<String>,
    pub explicit: Vec<Option<String>>,
    pub anchors: Vec<String>,
}

/// The headings of one document from their plain texts and explicit ids, in order.
pub fn titles_and_anchors(headings: Vec<(String, Option<String>)>) -> Headings {
    let mut numbering = Anchors::default();
    let mut out = Headings::default();
    for (text, explicit) in headings {
        let text = title(text);
        out.anchors
            .push(numbering.anchor(&text, explicit.as_deref()));
        out.texts.push(text);
        out.explicit.push(explicit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cleaned(line: &str) -> (String, Option<String>) {
        let c = clean(&source(line));
        (c.text, c.explicit)
    }

    #[test]
    fn source_of_atx_and_setext_headings() {
        assert_eq!(source("## Title ##\n"), "Title");
        assert_eq!(source("   ### A # b #"), "A # b");
        assert_eq!(source("#\t#"), "");
        assert_eq!(source("####### Seven"), "");
        assert_eq!(source("Setext *t*\r\n  two \r\n==="), "Setext *t* two");
        assert_eq!(source("## C#"), "C#");
        assert_eq!(source("## \x1cA\x1c"), "A");
    }

    #[test]
    fn clean_removes_ids_templates_and_closing_hashes() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            cleaned("## Install {#install-linux}"),
            ("Install".into(), some("install-linux"))
        );
        assert_eq!(
            cleaned("## Options {: #opts .wide}"),
            ("Options".into(), some("opts"))
        );
        assert_eq!(
            cleaned("## Hooks {/*use-state-hook*/}"),
            ("Hooks".into(), some("use-state-hook"))
        );
        assert_eq!(cleaned("## Fenced {.unnumbered}"), ("Fenced".into(), None));
        assert_eq!(
            cleaned("### Both ## {#both}"),
            ("Both".into(), some("both"))
        );
        assert_eq!(
            cleaned("## {{< new 0.1 >}} Feature {{% note %}}"),
            ("Feature".into(), None)
        );
        assert_eq!(
            cleaned("## {% raw %}Liquid{% endraw %} {{ x }}"),
            ("Liquid".into(), None)
        );
        assert_eq!(cleaned("## A {k=\"a } b\" #x}"), ("A".into(), some("x")));
        assert_eq!(cleaned("## A{#x}"), ("A".into(), some("x")));
        assert_eq!(cleaned("## A {#x} {#y}"), ("A".into(), some("y")));
        assert_eq!(cleaned("## A {/**/}"), ("A".into(), None));
        let markup = clean("The **`app.on`** _event_");
        assert!(!markup.plain && markup.text == "The **`app.on`** _event_");
    }

    #[test]
    fn an_attribute_list_of_any_length_is_read_without_recursion() {
        // a stack frame per attribute overflowed the stack of a test thread (2 MiB) here
        let many = format!("## Deep {{#last {}}}", ".c ".repeat(100_000).trim_end());
        assert_eq!(cleaned(&many), ("Deep".into(), Some("last".into())));
        let broken = format!("## Deep {{{} =}}", ".c ".repeat(100_000));
        assert_eq!(cleaned(&broken).1, None);
    }

    #[test]
    fn titles_are_bounded() {
        assert_eq!(title("é".repeat(200)), "é".repeat(200));
        assert_eq!(
            title(format!("{} {}", "a".repeat(198), "b".repeat(5))),
            format!("{}…", "a".repeat(198))
        );
        assert_eq!(prefix("éab", 2), "éa");
    }

    #[test]
    fn a_documents_headings_in_one_pass() {
        let long = format!("# {}", "word ".repeat(100));
        let blocks = [
            "# Usage",
            "## Usage {#run}",
            "Usage\n---",
            long.as_str(),
            "# *x*",
        ];
        let cleaned = clean_blocks(&blocks);
        assert!(cleaned[..4].iter().all(|c| c.plain) && !cleaned[4].plain);
        let plain = cleaned.into_iter().map(|c| (c.text, c.explicit)).collect();
        let out = titles_and_anchors(plain);
        assert_eq!(out.texts[2], "Usage");
        assert_eq!(out.texts[3].chars().count(), TITLE_CHARS);
        assert_eq!(out.explicit[1].as_deref(), Some("run"));
        assert_eq!(out.anchors[..3], ["usage", "run", "usage-1"]);
        assert_eq!(out.anchors[4], "x");
    }
}
