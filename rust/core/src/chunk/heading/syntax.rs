//! The syntax a heading's text loses: closing `#`s, template tags, MDX id comments and
//! attribute lists, each found where Python's regular expressions would find them.
//! Offsets are byte offsets: every cut falls on an ASCII character.

use std::collections::HashMap;

use crate::pyunicode::{is_space, is_word, strip};

pub(super) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Where Python's `$` (no MULTILINE) matches last: the end, or before a final "\n".
fn dollar(text: &str) -> usize {
    text.len() - usize::from(text.ends_with('\n'))
}

/// `re.sub(r"(?:^|(?<![ \t])[ \t]++)#++[ \t]*+$", "", text)`: closing `#`s removed.
pub(super) fn without_closing(text: &str) -> String {
    let b = text.as_bytes();
    let end = dollar(text);
    let mut i = end;
    while i > 0 && is_blank(b[i - 1]) {
        i -= 1;
    }
    let hashes_end = i;
    while i > 0 && b[i - 1] == b'#' {
        i -= 1;
    }
    if i == hashes_end {
        return text.to_owned();
    }
    let hashes_start = i;
    while i > 0 && is_blank(b[i - 1]) {
        i -= 1;
    }
    if i == hashes_start && i != 0 {
        return text.to_owned(); // a `#` inside a word
    }
    format!("{}{}", &text[..i], &text[end..])
}

/// `text` with each template tag replaced by a space: Hugo `{{< >}}`/`{{% %}}`, else
/// Liquid/Jinja `{% %}`/`{{ }}`, each to the first closer after its opener.
pub(super) fn untemplated(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let mut closers = Closers::new(text);
    let (mut out, mut pos) = (String::new(), 0);
    let mut changed = false;
    let mut at = opener(b, 0);
    while let Some(p) = at {
        let end = if b[p + 1] == b'%' {
            closers.find("%}", p + 2)
        } else {
            let hugo = match b.get(p + 2) {
                Some(b'<') | Some(b'%') => {
                    match (closers.find("%}}", p + 3), closers.find(">}}", p + 3)) {
                        (Some(a), Some(c)) => Some(a.min(c)),
                        (a, c) => a.or(c),
                    }
                }
                _ => None,
            };
            hugo.or_else(|| closers.find("}}", p + 2))
        };
        match end {
            None => at = opener(b, p + 1),
            Some(end) => {
                out.push_str(&text[pos..p]);
                out.push(' ');
                changed = true;
                pos = end;
                at = opener(b, end);
            }
        }
    }
    if !changed {
        return text.into();
    }
    out.push_str(&text[pos..]);
    out.into()
}

/// `\{[{%]` from `from`.
fn opener(b: &[u8], from: usize) -> Option<usize> {
    (from..b.len().saturating_sub(1)).find(|&i| b[i] == b'{' && matches!(b[i + 1], b'{' | b'%'))
}

/// The next end of each closer, remembered: searches start at increasing offsets, so a
/// closer found before a start is searched again, and one not found is never searched.
struct Closers<'a> {
    text: &'a str,
    found: HashMap<&'static str, Option<usize>>,
}

impl<'a> Closers<'a> {
    fn new(text: &'a str) -> Self {
        Closers {
            text,
            found: HashMap::new(),
        }
    }

    /// The end of the first `needle` at or after `start`.
    fn find(&mut self, needle: &'static str, start: usize) -> Option<usize> {
        let at = match self.found.get(needle) {
            Some(&Some(at)) if at >= start => Some(at),
            Some(&None) => None,
            _ => {
                let at = self
                    .text
                    .get(start..)
                    .and_then(|rest| rest.find(needle))
                    .map(|i| i + start);
                self.found.insert(needle, at);
                at
            }
        };
        at.map(|a| a + needle.len())
    }
}

/// An MDX id comment `{/* id */}` that ends `text` (blanks after it, and one line end):
/// where the blanks before it start, and the id. The first `{/*` opens it.
pub(super) fn mdx_id(text: &str) -> Option<(usize, &str)> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let end = body.trim_end_matches([' ', '\t']).len().checked_sub(3)?;
    if !text.as_bytes()[end..].starts_with(b"*/}") {
        return None;
    }
    let start = text[..end].find("{/*")?;
    let cut = text[..start].trim_end_matches([' ', '\t']).len();
    Some((cut, strip(&text[start + 3..end])))
}

/// `{#id .class key=value}` (Pandoc, Hugo, Jekyll) or `{: #id .class}` (kramdown) at the
/// end of `text`, blanks around it: where its blanks before it start, and what is
/// inside the braces. The leftmost `{` that opens a whole attribute list wins.
pub(super) fn attributes(text: &str) -> Option<(usize, &str)> {
    let b = text.as_bytes();
    let mut close = dollar(text);
    while close > 0 && is_blank(b[close - 1]) {
        close -= 1;
    }
    close = close.checked_sub(1)?;
    if b[close] != b'}' {
        return None;
    }
    let mut inner_end = close;
    while inner_end > 0 && is_blank(b[inner_end - 1]) {
        inner_end -= 1;
    }
    let mut list = AttrList::new(&text[..inner_end]);
    for open in (0..close).filter(|&i| b[i] == b'{') {
        let mut start = open + 1;
        if b.get(start) == Some(&b':') {
            start += 1;
        }
        while start < inner_end && is_blank(b[start]) {
            start += 1;
        }
        if start < inner_end && list.parses_from(start) {
            let mut cut = open;
            while cut > 0 && is_blank(b[cut - 1]) {
                cut -= 1;
            }
            return Some((cut, &text[start..inner_end]));
        }
    }
    None
}

/// Whether `text[start..]` is `ATTR([ \t]+ATTR)*`, ATTR being `[#.][^\s{}]+`,
/// `[\w-]+=("[^"]*"|'[^']*'|[^\s{}]+)` or `-`; remembered per start.
struct AttrList<'a> {
    text: &'a str,
    known: HashMap<usize, bool>,
}

impl<'a> AttrList<'a> {
    fn new(text: &'a str) -> Self {
        AttrList {
            text,
            known: HashMap::new(),
        }
    }

    /// Depth first over the starts of the following ATTRs, with a stack of its own (an
    /// attribute list of a hundred thousand ATTRs is as deep): a start parses when one of
    /// its ATTR's ends is the end of the text, or is followed by blanks and a start that
    /// parses.
    fn parses_from(&mut self, start: usize) -> bool {
        if let Some(&known) = self.known.get(&start) {
            return known;
        }
        // (a start, the starts after its ATTR, how many of them were tried)
        let mut stack = match self.followers(start) {
            None => return self.settle(&[start], true),
            Some(next) => vec![(start, next, 0)],
        };
        while let Some((at, next, tried)) = stack.last_mut() {
            let Some(&candidate) = next.get(*tried) else {
                let failed = *at;
                stack.pop();
                self.known.insert(failed, false);
                continue;
            };
            *tried += 1;
            let grows = match self.known.get(&candidate) {
                Some(&false) => continue,
                Some(&true) => None,
                None => self.followers(candidate),
            };
            match grows {
                Some(after) => stack.push((candidate, after, 0)),
                None => {
                    // it parses, and so does every start waiting on it
                    let mut starts: Vec<usize> = stack.iter().map(|f| f.0).collect();
                    starts.push(candidate);
                    return self.settle(&starts, true);
                }
            }
        }
        false
    }

    fn settle(&mut self, starts: &[usize], ok: bool) -> bool {
        for &s in starts {
            self.known.insert(s, ok);
        }
        ok
    }

    /// The starts of the ATTRs that may follow the one at `start` (after its blanks), or
    /// None when an ATTR there ends the text.
    fn followers(&self, start: usize) -> Option<Vec<usize>> {
        let b = self.text.as_bytes();
        let mut next = Vec::new();
        for end in self.attr_ends(start) {
            if end == b.len() {
                return None;
            }
            let after = end + b[end..].iter().take_while(|&&c| is_blank(c)).count();
            if after > end && after < b.len() {
                next.push(after);
            }
        }
        Some(next)
    }

    /// The ends an ATTR starting at `start` can have and still be followed by a blank or
    /// the end (a run of `[^\s{}]` stopped early is followed by neither).
    fn attr_ends(&self, start: usize) -> Vec<usize> {
        let (text, b) = (self.text, self.text.as_bytes());
        let mut ends = Vec::new();
        if matches!(b[start], b'#' | b'.') {
            let end = value_end(text, start + 1);
            if end > start + 1 {
                ends.push(end);
            }
        }
        if b[start] == b'-' {
            ends.push(start + 1);
        }
        let name = text[start..]
            .char_indices()
            .find(|&(_, c)| !(is_word(c) || c == '-'))
            .map_or(text.len(), |(i, _)| start + i);
        if name > start && b.get(name) == Some(&b'=') {
            let v = name + 1;
            if let Some(&q @ (b'"' | b'\'')) = b.get(v) {
                if let Some(close) = text[v + 1..].find(q as char) {
                    ends.push(v + 1 + close + 1);
                }
            }
            let end = value_end(text, v);
            if end > v {
                ends.push(end);
            }
        }
        ends
    }
}

/// The end of the run of `[^\s{}]` that starts at `start`.
fn value_end(text: &str, start: usize) -> usize {
    text[start..]
        .char_indices()
        .find(|&(_, c)| is_space(c) || c == '{' || c == '}')
        .map_or(text.len(), |(i, _)| start + i)
}

/// `(?:^|\s)#([^\s{}]+)`: the first `#id` of an attribute list.
pub(super) fn id_in_attributes(attrs: &str) -> Option<&str> {
    let mut prev: Option<char> = None;
    for (i, c) in attrs.char_indices() {
        if c == '#' && prev.is_none_or(is_space) {
            let end = value_end(attrs, i + 1);
            if end > i + 1 {
                return Some(&attrs[i + 1..end]);
            }
        }
        prev = Some(c);
    }
    None
}
