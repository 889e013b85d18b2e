//! The documents stage for one document's bytes: a decoded document (its text as a range
//! of the bytes, counts, hashes, where its front matter is), or a reject with a reason and
//! a sentence for people. The words of each reject are the ones people see in
//! rejects.parquet; the reason for invalid UTF-8 is worded as CPython's decoder words it.

use sha2::{Digest, Sha256};

use crate::parse::frontmatter::{self, Format};

/// A document that decodes: `text` is `data[text_start..]` (a BOM left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text_start: usize,
    pub had_bom: bool,
    pub n_chars: usize,
    pub n_lines: usize,
    pub newline: &'static str,
    /// The front matter's format, and its body (bytes of the text, delimiters left out).
    pub front_matter: Option<(&'static str, usize, usize)>,
}

/// Why a document is a reject: a reason code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    pub reason: &'static str,
    pub detail: String,
}

/// The document in `data`, as the documents stage decodes it (`markdown`: whether its
/// front matter is looked for).
pub fn decode(data: &[u8], markdown: bool, max_bytes: usize) -> Result<Decoded, Reject> {
    let reject = |reason: &'static str, detail: String| Err(Reject { reason, detail });
    if data.len() > max_bytes {
        let detail = format!(
            "{} bytes is over the limit of {max_bytes} bytes",
            data.len()
        );
        return reject("too_large", detail);
    }
    if data.starts_with(b"\xff\xfe\x00\x00") || data.starts_with(b"\x00\x00\xfe\xff") {
        let detail = "UTF-32 text (byte order mark at byte 0): save it as UTF-8".to_owned();
        return reject("invalid_utf8", detail);
    }
    if data.starts_with(b"\xff\xfe") || data.starts_with(b"\xfe\xff") {
        let detail = "UTF-16 text (byte order mark at byte 0): save it as UTF-8".to_owned();
        return reject("invalid_utf8", detail);
    }
    if let Some(nul) = memchr(0, data) {
        let detail = format!("NUL byte at byte offset {nul}: looks like a binary file");
        return reject("binary", detail);
    }
    let text = match std::str::from_utf8(data) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to();
            let why = utf8_reason(data[at], e.error_len());
            let detail = format!("not valid UTF-8 at byte offset {at}: {why}");
            return reject("invalid_utf8", detail);
        }
    };
    let had_bom = text.starts_with('\u{feff}');
    let text_start = if had_bom { 3 } else { 0 };
    let text = &text[text_start..];
    let (crlf, cr, lf) = endings(text.as_bytes());
    let front_matter = match markdown {
        true => frontmatter::locate(text).map(|(fmt, start, end, _)| {
            let name = match fmt {
                Format::Yaml => "yaml",
                Format::Toml => "toml",
            };
            (name, start, end)
        }),
        false => None,
    };
    Ok(Decoded {
        text_start,
        had_bom,
        n_chars: text.chars().count(),
        n_lines: match text.is_empty() {
            true => 0,
            false => crlf + cr + lf + usize::from(!text.ends_with(['\n', '\r'])),
        },
        newline: newline_style(crlf, cr, lf),
        front_matter,
    })
}

/// CPython's words for a UTF-8 sequence that does not decode, from its first byte and
/// the length Rust gives the invalid part (None: the data ends inside a sequence).
fn utf8_reason(first: u8, error_len: Option<usize>) -> &'static str {
    let starts = matches!(first, 0xC2..=0xF4);
    match (starts, error_len) {
        (false, _) => "invalid start byte",
        (true, None) => "unexpected end of data",
        (true, Some(_)) => "invalid continuation byte",
    }
}

fn memchr(needle: u8, data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == needle)
}

/// (CRLF, lone CR, lone LF) line endings.
fn endings(b: &[u8]) -> (usize, usize, usize) {
    let (mut crlf, mut cr, mut lf) = (0, 0, 0);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                crlf += 1;
                i += 1;
            }
            b'\r' => cr += 1,
            b'\n' => lf += 1,
            _ => {}
        }
        i += 1;
    }
    (crlf, cr, lf)
}

fn newline_style(crlf: usize, cr: usize, lf: usize) -> &'static str {
    let kinds: Vec<&'static str> = [("crlf", crlf), ("cr", cr), ("lf", lf)]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(name, _)| name)
        .collect();
    match kinds.len() {
        0 => "none",
        1 => kinds[0],
        _ => "mixed",
    }
}

/// sha256 of the bytes, as 64 hex digits (a document's content hash; a table row's
/// metadata, when it has any, is hashed on in Python).
pub fn content_hash(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The document id of a path: the first 16 hex digits of sha256("doc\0" + path).
pub fn doc_id(path: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(b"doc\0");
    hash.update(path.as_bytes());
    hex(&hash.finalize()[..8])
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_in_the_order_they_are_looked_for() {
        let r = |d: &[u8]| decode(d, true, 100).unwrap_err();
        assert_eq!(r(&[b'a'; 101]).reason, "too_large");
        assert!(r(b"\xff\xfe\x00\x00# x").detail.starts_with("UTF-32"));
        assert!(r(b"\xff\xfe#\x00").detail.starts_with("UTF-16"));
        assert_eq!(
            r(b"# T\n\x00\x01").detail,
            "NUL byte at byte offset 4: looks like a binary file"
        );
        let bad = |d: &[u8]| r(d).detail;
        assert_eq!(
            bad(b"ab\x80"),
            "not valid UTF-8 at byte offset 2: invalid start byte"
        );
        assert_eq!(
            bad(b"ab\xc3"),
            "not valid UTF-8 at byte offset 2: unexpected end of data"
        );
        assert_eq!(
            bad(b"\xed\xa0\x80"),
            "not valid UTF-8 at byte offset 0: invalid continuation byte"
        );
        assert_eq!(
            bad(b"\xc0\xaf"),
            "not valid UTF-8 at byte offset 0: invalid start byte"
        );
    }

    #[test]
    fn counts_lines_newlines_and_front_matter() {
        let d = decode("\u{feff}---\r\nt: 1\r\n---\r\nx".as_bytes(), true, 1000).unwrap();
        assert!(d.had_bom && d.text_start == 3);
        assert_eq!((d.n_lines, d.newline, d.n_chars), (4, "crlf", 17));
        assert_eq!(d.front_matter, Some(("yaml", 5, 11)));
        let plain = decode(b"a\rb\nc\r\n", false, 100).unwrap();
        assert_eq!((plain.n_lines, plain.newline), (3, "mixed"));
        assert_eq!(decode(b"", true, 100).unwrap().n_lines, 0);
        assert_eq!(
            decode(b"---\nt: 1\n---\n", false, 100)
                .unwrap()
                .front_matter,
            None
        );
    }

    #[test]
    fn ids_and_hashes() {
        assert_eq!(doc_id("a.md").len(), 16);
        assert_eq!(
            content_hash(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
