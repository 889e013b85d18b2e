//! Sections of a document's blocks, the leads that keep a heading with its first content,
//! and the blocks that say nothing alone.

use crate::chunk::pack::{Parent, SEP};
use crate::pyunicode::{is_line_break, is_space, strip};

/// The section number of every block, and per section the position of the heading block
/// that opens it (None for a preamble). A section opens at a heading of level <= `depth`
/// (`depth` None: never) or at the first block. `levels` is the heading level, 0 for any
/// other block.
pub fn sections(
    heading: &[bool],
    levels: &[u8],
    depth: Option<u8>,
) -> (Vec<u32>, Vec<Option<usize>>) {
    let mut numbers = Vec::with_capacity(heading.len());
    let mut openers: Vec<Option<usize>> = Vec::new();
    for (i, (&h, &level)) in heading.iter().zip(levels).enumerate() {
        let opens = h && depth.is_some_and(|d| level <= d);
        if opens || openers.is_empty() {
            openers.push(opens.then_some(i));
        }
        numbers.push(openers.len() as u32 - 1);
    }
    (numbers, openers)
}

/// Per section (given its heading level, None for a preamble), the section whose heading
/// is its parent, or the top of the document; None for a preamble.
pub fn parents(levels: &[Option<u8>]) -> Vec<Option<Parent>> {
    let mut stack: Vec<(u8, usize)> = Vec::new();
    levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let level = (*level)?;
            while stack.last().is_some_and(|&(l, _)| l >= level) {
                stack.pop();
            }
            let parent = stack
                .last()
                .map_or(Parent::Root, |&(_, s)| Parent::Section(s));
            stack.push((level, i));
            Some(parent)
        })
        .collect()
}

/// Per block, the tokens before it (blank lines included) in the chunk its heading opens:
/// the headings right before it, headings of empty sections before those, and content
/// after the heading while that stays under `small`; 0 for headings and where no heading
/// leads.
pub fn leads(heading: &[bool], numbers: &[u32], tokens: &[i64], small: i64) -> Vec<i64> {
    let mut out = Vec::with_capacity(heading.len());
    let (mut lead, mut headed, mut content) = (0i64, false, false);
    let mut prev: Option<u32> = None;
    for ((&h, &sec), &n) in heading.iter().zip(numbers).zip(tokens) {
        if prev != Some(sec) && content {
            (lead, headed, content) = (0, false, false);
        }
        prev = Some(sec);
        if h {
            if content {
                (lead, content) = (0, false);
            }
            out.push(0);
            (lead, headed) = (lead + n + SEP, true);
            continue;
        }
        out.push(if headed { lead } else { 0 });
        (lead, content) = (lead + n + SEP, true);
        if lead >= small {
            (lead, headed, content) = (0, false, false);
        }
    }
    out
}

const COMMENTS: [(&str, &str); 2] = [("<!--", "-->"), ("{/*", "*/}")];

/// Whether `text` is comments and whitespace only: each comment from its opener to the
/// first closer after it (string searches: linear however many openers stay unclosed).
fn only_comments(text: &str) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(is_space);
        if rest.is_empty() {
            return true;
        }
        let Some(&(open, close)) = COMMENTS.iter().find(|(o, _)| rest.starts_with(o)) else {
            return false;
        };
        match rest[open.len()..].find(close) {
            Some(at) => rest = &rest[open.len() + at + close.len()..],
            None => return false,
        }
    }
}

/// ` {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*\S` matched at the start of a line (a link reference
/// definition's opening): the label ends at the first `]` not escaped by a backslash.
fn is_link_definition(line: &str) -> bool {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    let Some(rest) = line[spaces.min(3)..].strip_prefix('[') else {
        return false;
    };
    let mut chars = rest.char_indices();
    let mut label = 0;
    let close = loop {
        match chars.next() {
            None => return false,
            Some((at, ']')) => break at,
            Some((_, '\\')) => {
                if chars.next().is_none() {
                    return false;
                }
            }
            Some(_) => {}
        }
        label += 1;
    };
    let Some(after) = rest[close + 1..].strip_prefix(':') else {
        return false;
    };
    label > 0
        && after
            .trim_start_matches([' ', '\t'])
            .chars()
            .next()
            .is_some_and(|c| !is_space(c))
}

/// `\s*(?:"[^"]*"|'[^']*'|\([^)]*\))\s*` matching the whole line (a definition's title on
/// a line of its own).
fn is_link_title(line: &str) -> bool {
    let s = strip(line);
    let mut chars = s.chars();
    let close = match chars.next() {
        Some('"') => '"',
        Some('\'') => '\'',
        Some('(') => ')',
        _ => return false,
    };
    let inner = chars.as_str();
    inner.find(close) == Some(inner.len().wrapping_sub(1)) && !inner.is_empty()
}

/// A block that says nothing to a reader: only comments (HTML `<!-- -->`, MDX `{/* */}`),
/// or a paragraph of link reference definitions only.
pub fn is_filler(paragraph: bool, text: &str) -> bool {
    if (text.contains("<!--") || text.contains("{/*")) && only_comments(text) {
        return true;
    }
    if !paragraph || !text.contains("]:") {
        return false;
    }
    text.split(is_line_break)
        .filter(|line| !strip(line).is_empty())
        .all(|line| is_link_definition(line) || is_link_title(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_opens_at_each_heading_within_the_depth() {
        let heading = [false, true, false, true, true, false];
        let levels = [0, 1, 0, 3, 2, 0];
        let (numbers, openers) = sections(&heading, &levels, Some(2));
        assert_eq!(numbers, [0, 1, 1, 1, 2, 2]);
        assert_eq!(openers, [None, Some(1), Some(4)]);
        let (numbers, openers) = sections(&heading, &levels, None);
        assert_eq!(numbers, [0; 6]);
        assert_eq!(openers, [None]);
    }

    #[test]
    fn a_parent_is_the_nearest_section_above_of_a_smaller_level() {
        let levels = [None, Some(1), Some(2), Some(3), Some(2), Some(1)];
        let (root, s) = (Some(Parent::Root), |i| Some(Parent::Section(i)));
        assert_eq!(parents(&levels), [None, root, s(1), s(2), s(1), root]);
    }

    #[test]
    fn a_lead_carries_headings_and_small_content_to_the_next_block() {
        let heading = [true, false, false, true, true, false];
        let numbers = [0, 0, 0, 1, 1, 1];
        let tokens = [5, 10, 50, 3, 4, 7];
        // 6 after the heading, 17 after the small paragraph, then past `small` (20)
        assert_eq!(leads(&heading, &numbers, &tokens, 20), [0, 6, 17, 0, 0, 9]);
    }

    #[test]
    fn comments_only_blocks_are_filler() {
        assert!(is_filler(false, " <!-- a -->\n{/* b */} "));
        assert!(!is_filler(false, "<!-- a --> text"));
        assert!(!is_filler(false, "<!-- never closed"));
        assert!(!is_filler(false, &"<!--".repeat(10_000)));
    }

    #[test]
    fn link_definitions_are_filler_in_a_paragraph_only() {
        let defs = "[a]: https://a.org\n   [b\\]c]:\t/b \"t\"\n  'title'\n(other)";
        assert!(is_filler(true, defs));
        assert!(!is_filler(false, defs));
        assert!(!is_filler(true, "    [a]: x"));
        assert!(!is_filler(true, "[]: x"));
        assert!(!is_filler(true, "[a]:   "));
        assert!(!is_filler(true, "[a]: x\nprose"));
        assert!(!is_filler(true, "[a]: x\n\"t\" more"));
        assert!(!is_filler(true, "[a\\"));
    }

    #[test]
    fn lines_break_where_python_splitlines_breaks_them() {
        assert!(is_filler(true, "[a]: x\u{2028}[b]: y\x1c't'"));
        // U+001F is no line break but Python whitespace: the definition's target is missing
        assert!(!is_filler(true, "[a]:\x1f"));
    }
}
