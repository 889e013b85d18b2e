//! What embed_text holds of a chunk's text: heading lines whose source holds braces written
//! as `#` markers and the heading's clean text, paragraphs of MkDocs include lines
//! (`{* ../docs_src/app.py hl[3] *}`) left out with the blank lines before them.

use super::prepare::Context;
use super::units::Unit;
use crate::parse::kind::Kind;
use crate::pyunicode::is_line_break;

/// The embedding form of a chunk's `text`, joined from `units` (each unit's text appears
/// in `text`, in order). A chunk of nothing but include lines keeps them.
pub fn body(text: &str, units: &[&Unit], ctx: &Context) -> String {
    let forms: Vec<Option<String>> = units.iter().map(|u| form(u, ctx)).collect();
    if forms.iter().all(Option::is_none) {
        return text.to_owned();
    }
    let mut out: Vec<&str> = Vec::new();
    let mut at = 0;
    for (u, form) in units.iter().zip(&forms) {
        let Some(found) = text[at..].find(u.text.as_str()) else {
            continue; // not found as it is (cannot happen): the text stays as it is
        };
        let start = at + found;
        if form.as_deref() != Some("") {
            out.push(if out.is_empty() { "" } else { &text[at..start] });
            out.push(form.as_deref().unwrap_or(&u.text));
        }
        at = start + u.text.len();
    }
    if out.is_empty() {
        return text.to_owned();
    }
    let mut joined = out.concat();
    joined.push_str(&text[at..]);
    joined
}

/// What embed_text writes for a unit: None for its text as it is.
fn form(u: &Unit, ctx: &Context) -> Option<String> {
    if u.key.contains('@') {
        return None; // a piece of a block: as it is
    }
    if u.kind == Kind::Heading && u.text.contains('{') {
        let clean = u.kept.and_then(|p| ctx.clean[p].as_deref()).unwrap_or("");
        let level = u.level.filter(|&l| l != 0).unwrap_or(1) as usize;
        return Some(match clean.is_empty() {
            true => String::new(),
            false => format!("{} {clean}", "#".repeat(level)),
        });
    }
    let opens = u.text.trim_start_matches([' ', '\t']).starts_with("{*");
    if u.kind == Kind::Paragraph && opens && includes(&u.text) {
        return Some(String::new());
    }
    None
}

/// Whether every line of `text` is an MkDocs include (`{* FILE ... *}`).
fn includes(text: &str) -> bool {
    text.split(is_line_break)
        .map(|l| l.trim_matches([' ', '\t']))
        .filter(|l| !l.is_empty())
        .all(|l| l.starts_with("{*") && l.ends_with("*}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_paragraphs_are_lines_of_includes_only() {
        assert!(includes("{* ../a.py hl[3] *}\n  {* b.py *}\u{2028}"));
        assert!(!includes("{* a.py *}\ntext"));
        assert!(!includes("{* a.py"));
    }
}
