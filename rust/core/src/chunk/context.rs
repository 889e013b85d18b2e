//! What a chunk says of where it comes from: the context header
//! `Title > A > B`, clipped elements, the file-stem title, and the chunk's url from a link
//! template. Paths follow Python's PurePosixPath, urls `urllib.parse.quote`.

use crate::pyunicode::{casefold, lower, rstrip};

pub const SEP: &str = " > ";
pub const MAX_ELEMENT_CHARS: usize = 120;
const FOLDER_STEMS: [&str; 3] = ["index", "_index", "readme"];

/// `text` cut to `limit` code points at its last space within them, with "…" after it.
pub fn clip(text: &str, limit: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(limit) else {
        return text.to_owned();
    };
    let head = &text[..end];
    let cut = head.rfind(' ').map_or(head, |i| &head[..i]);
    format!("{}…", rstrip(cut))
}

/// `Title > A > B`: each element clipped; one equal (case folded) to the one before it
/// is left out, and so is an empty one.
pub fn header_line(title: &str, path: &[&str]) -> String {
    let mut out: Vec<String> = Vec::with_capacity(path.len() + 1);
    let mut last_folded = String::new();
    for element in std::iter::once(&title).chain(path) {
        let element = clip(element, MAX_ELEMENT_CHARS);
        if element.is_empty() {
            continue;
        }
        let folded = casefold(&element);
        if out.is_empty() || folded != last_folded {
            out.push(element);
            last_folded = folded;
        }
    }
    out.join(SEP)
}

/// A path as PurePosixPath holds it: its root ("", "/" or "//") and its parts, without
/// empty and "." parts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PosixPath<'a> {
    root: &'a str,
    parts: Vec<&'a str>,
}

impl<'a> PosixPath<'a> {
    fn new(path: &'a str) -> Self {
        let rel = path.trim_start_matches('/');
        let root = match path.len() - rel.len() {
            0 => "",
            2 => "//",
            _ => "/",
        };
        let parts = rel
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        PosixPath { root, parts }
    }

    /// `str(path)`
    fn text(&self) -> String {
        let joined = format!("{}{}", self.root, self.parts.join("/"));
        if joined.is_empty() {
            ".".to_owned()
        } else {
            joined
        }
    }

    fn name(&self) -> &'a str {
        self.parts.last().copied().unwrap_or("")
    }

    fn parent(&self) -> PosixPath<'a> {
        let n = self.parts.len().saturating_sub(1);
        PosixPath {
            root: self.root,
            parts: self.parts[..n].to_vec(),
        }
    }

    /// Where the suffix of the name starts (`.md` of `a.md`; none for `.profile`, `a.`)
    fn suffix_at(&self) -> Option<usize> {
        let name = self.name();
        name.rfind('.').filter(|&i| i > 0 && i + 1 < name.len())
    }

    fn stem(&self) -> &'a str {
        let name = self.name();
        self.suffix_at().map_or(name, |i| &name[..i])
    }

    /// `path.with_suffix("") if path.suffix else path`
    fn without_suffix(&self) -> PosixPath<'a> {
        let mut out = self.clone();
        if self.suffix_at().is_some() {
            if let Some(last) = out.parts.last_mut() {
                *last = self.stem();
            }
        }
        out
    }

    /// An `index`, `_index` or `README` file: the page of its folder.
    fn names_its_folder(&self) -> bool {
        FOLDER_STEMS.contains(&lower(self.stem()).as_str())
    }
}

/// The title of a document without one: its file stem, or its folder's name for an
/// `index`, `_index` or `README` file in a folder.
pub fn path_title(path: &str) -> String {
    let p = PosixPath::new(path);
    let folder = p.parent();
    if p.names_its_folder() && !folder.name().is_empty() {
        return folder.name().to_owned();
    }
    p.stem().to_owned()
}

/// `PurePosixPath(path).stem`: the last element of the path, less its last suffix.
pub fn path_stem(path: &str) -> &str {
    PosixPath::new(path).stem()
}

/// `urllib.parse.quote(text, safe=safe)`: UTF-8, every byte but ASCII letters, digits,
/// `_.-~` and `safe` as `%XX` (upper-case hex).
pub fn quote(text: &str, safe: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) || safe.as_bytes().contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The chunk's link: the template filled in, path segments and anchor percent-encoded;
/// without an anchor, `#{anchor}` (or `{anchor}`) is left out, and for a top-level file
/// `{dir}/` is (and `{url_path}/` for a top-level index page). Err: a template that
/// `str.format` with the link fields would not fill.
pub fn url(
    template: &str,
    path: &str,
    anchor: Option<&str>,
    line_start: i64,
    line_end: i64,
) -> Result<String, String> {
    let mut template = template.to_owned();
    let anchor = anchor.unwrap_or("");
    if anchor.is_empty() {
        template = template.replace("#{anchor}", "").replace("{anchor}", "");
    }
    let posix = PosixPath::new(path);
    let parent = posix.parent().text();
    if parent == "." {
        template = template.replace("{dir}/", "");
    }
    let stem = posix.without_suffix();
    let page = if posix.names_its_folder() {
        parent.clone()
    } else {
        stem.text()
    };
    if page == "." {
        template = template.replace("{url_path}/", "");
    }
    let dot_empty = |s: &str| {
        if s == "." {
            String::new()
        } else {
            quote(s, "/")
        }
    };
    let value = |name: &str| -> Option<String> {
        Some(match name {
            "path" => quote(&posix.text(), "/"),
            "path_stem" => quote(&stem.text(), "/"),
            "url_path" => dot_empty(&page),
            "stem" => quote(posix.stem(), "/"),
            "dir" => dot_empty(&parent),
            "anchor" => quote(anchor, ""),
            "line_start" => line_start.to_string(),
            "line_end" => line_end.to_string(),
            _ => return None,
        })
    };
    format_fields(&template, value)
}

/// `template.format(**fields)` for templates of `{name}` fields and `{{`/`}}` escapes.
fn format_fields(template: &str, value: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return Err(format!("single '}}' in link template {template:?}"));
        }
        let close = tail
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in link template {template:?}"))?;
        let name = &tail[1..close];
        let filled =
            value(name).ok_or_else(|| format!("link template field {{{name}}} is unknown"))?;
        out.push_str(&filled);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url1(template: &str, path: &str, anchor: Option<&str>) -> String {
        url(template, path, anchor, 1, 1).unwrap()
    }

    #[test]
    fn clip_cuts_at_a_space() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("ab cd ef", 6), "ab cd…");
        assert_eq!(clip("ab  cdef", 6), "ab…");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("é\u{a0} xyz", 3), "é…");
    }

    #[test]
    fn header_line_leaves_out_repeats() {
        assert_eq!(
            header_line("Guide", &["guide", "Install"]),
            "Guide > Install"
        );
        assert_eq!(header_line("Straße", &["STRASSE", ""]), "Straße");
        assert_eq!(header_line("", &["A", "a", "B"]), "A > B");
    }

    #[test]
    fn paths_as_pure_posix_paths() {
        assert_eq!(PosixPath::new("a//./b.md").text(), "a/b.md");
        assert_eq!(PosixPath::new("").text(), ".");
        assert_eq!(PosixPath::new("//x/").text(), "//x");
        assert_eq!(PosixPath::new("///x").parent().text(), "/");
        assert_eq!(PosixPath::new(".profile").stem(), ".profile");
        assert_eq!(PosixPath::new("a.tar.gz").stem(), "a.tar");
        assert_eq!(PosixPath::new("a.").stem(), "a.");
        assert_eq!(path_title("guide/install/_index.md"), "install");
        assert_eq!(path_title("README.md"), "README");
        assert_eq!(path_title("docs/eip-1559.md"), "eip-1559");
    }

    #[test]
    fn urls_from_templates() {
        let site = "https://x.dev/{url_path}/#{anchor}";
        assert_eq!(url1(site, "index.md", Some("top")), "https://x.dev/#top");
        assert_eq!(
            url1(site, "a/index.mdx", Some("b c")),
            "https://x.dev/a/#b%20c"
        );
        assert_eq!(
            url1("{path}", "my guide/ü.md", None),
            "my%20guide/%C3%BC.md"
        );
        assert_eq!(
            url1("https://x/{dir}/{stem}.html", "top.md", None),
            "https://x/top.html"
        );
        assert_eq!(url1("{anchor}", "a", Some("a/b")), "a%2Fb");
        assert_eq!(url1("{{x}}{line_end}", "a", None), "{x}1");
        assert!(url("{nope}", "a", None, 1, 1).is_err());
        assert!(url("a}", "a", None, 1, 1).is_err());
    }
}
