//! Code and tables cut into parts that repeat what makes them read as such: code by lines
//! with its fence and info string re-opened in every part, tables by rows under their
//! header and delimiter rows.

use super::fine::{fine_spans, group, Counted, Level};
use super::text::{gap, gap_limit, line_start, lines, Span};
use super::{Piece, Split};
use crate::parse::fence::{closes_fence, continuation, fence_prefix, line_end, opens_fence};
use crate::parse::lines::Lines;
use crate::pyunicode::{is_blank, strip};
use crate::tokens::counter::Counter;

const LINES_THEN_WORDS: &[Level] = &[Level::Line, Level::Word];

/// Where the parts' body comes from and what each part covers: the body text[body.0..
/// body.1] (pieces cut from it), the first part's start and the last part's end.
pub struct Frame<'h> {
    pub head: &'h str,
    pub tail: &'h str,
    pub body: Span,
    pub first_s: usize,
    pub last_e: usize,
}

impl<C: Counter> Split<'_, '_, C> {
    /// Body lines grouped into parts, each wrapped as head + body + tail.
    pub fn wrapped(&mut self, f: &Frame, levels: &[Level]) -> Result<Vec<Piece>, C::Error> {
        let text = self.text;
        let overhead = self.count.count(&[f.head, f.tail])?.iter().sum::<i64>() + 2;
        let room = (self.budget - overhead).max(1);
        let limit = gap_limit(self.budget);
        let pieces = fine_spans(text, f.body.0, f.body.1, levels, room, self.count, limit)?;
        if pieces.is_empty() {
            // nothing but the head: an empty code block whose fence line is huge
            let short = [f.head, f.tail]
                .iter()
                .filter(|x| !x.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            let short = if short.is_empty() {
                text.to_owned()
            } else {
                short
            };
            let tokens = self.count.count_one(&short)?;
            return Ok(vec![Piece::new(short, 0, text.len(), tokens)]);
        }
        let groups = group(
            &pieces,
            (self.group_tokens.min(self.budget) - overhead).max(1),
        );
        let eol = line_end(text);
        let parts: Vec<String> = groups
            .iter()
            .map(|g| {
                let body = body(text, &pieces[g.clone()], limit);
                [f.head, &body, f.tail]
                    .iter()
                    .filter(|x| !x.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(eol)
            })
            .collect();
        let counts = self
            .count
            .count(&parts.iter().map(String::as_str).collect::<Vec<_>>())?;
        let n = groups.len();
        Ok(groups
            .into_iter()
            .zip(parts)
            .zip(counts)
            .enumerate()
            .map(|(i, ((g, part), tokens))| {
                let s = if i == 0 {
                    f.first_s
                } else {
                    line_start(text, pieces[g.start].0)
                };
                let e = if i == n - 1 {
                    f.last_e
                } else {
                    pieces[g.end - 1].1
                };
                Piece::new(part, s, e, tokens)
            })
            .collect())
    }

    /// Code: indented code in plain line groups; fenced code with its opening line and a
    /// closing line in every part.
    pub fn code(&mut self) -> Result<Vec<Piece>, C::Error> {
        let text = self.text;
        let lines = Lines::of(text);
        let first = lines.line(text, 0);
        let whole = (0, text.len());
        let Some(run) = opens_fence(first) else {
            let f = Frame {
                head: "",
                tail: "",
                body: whole,
                first_s: 0,
                last_e: text.len(),
            };
            return self.wrapped(&f, LINES_THEN_WORDS);
        };
        let last = lines.line(text, lines.len() - 1);
        let closed = lines.len() > 1 && closes_fence(last, run);
        let body_e = if closed {
            text.len() - last.len()
        } else {
            text.len()
        };
        let crlf = text[first.len()..].starts_with("\r\n");
        let body_s = first.len() + if crlf { 2 } else { 1 }; // past the end for one line
        let mut head = first.to_owned();
        let mut tail = if closed {
            last.to_owned()
        } else {
            continuation(fence_prefix(first)) + run
        };
        let fence_tokens: i64 = self.count.count(&[&head, &tail])?.iter().sum();
        if fence_tokens > self.budget.div_euclid(4) {
            // repeated in every part: keep it small
            let body = if closed {
                1..lines.len() - 1
            } else {
                1..lines.len()
            };
            let body: Vec<&str> = body.map(|i| lines.line(text, i)).collect();
            match self.short_fence(first, &body, run)? {
                Some(fences) => (head, tail) = fences,
                None => {
                    let f = Frame {
                        head: "",
                        tail: "",
                        body: (0, text.len()),
                        first_s: 0,
                        last_e: text.len(),
                    };
                    return self.wrapped(&f, LINES_THEN_WORDS);
                }
            }
        }
        let f = Frame {
            head: &head,
            tail: &tail,
            body: (body_s, body_e),
            first_s: 0,
            last_e: text.len(),
        };
        self.wrapped(&f, LINES_THEN_WORDS)
    }

    /// Opening and closing lines for the parts of code whose fence is huge (10,000
    /// backticks, or an info string of 100 kB): the shortest run that nothing inside
    /// closes, and the info string cut to 40 code points (dropped if even that is too long).
    /// None when even those two lines take more than half the budget (a line of thousands
    /// of backticks inside the code): repeated in every part they would leave each part
    /// room for a character or two, so that the parts' text grows with the square of the
    /// block's; the parts are then the block's lines without fences, as indented code's.
    fn short_fence(
        &mut self,
        first: &str,
        body: &[&str],
        run: &str,
    ) -> Result<Option<(String, String)>, C::Error> {
        let ch = run.as_bytes()[0];
        let mut inner = 0;
        for line in body {
            let stripped = line.trim_start_matches([' ', '\t', '>']);
            let n = stripped.bytes().take_while(|&b| b == ch).count();
            if n > 0 && is_blank(&stripped[n..]) {
                inner = inner.max(n);
            }
        }
        let fence = (ch as char).to_string().repeat(3.max(inner + 1));
        let prefix = fence_prefix(first);
        let info: String = strip(&first[prefix.len() + run.len()..])
            .chars()
            .take(40)
            .collect();
        let mut head = format!("{prefix}{fence}{info}");
        if self.count.count_one(&head)? > self.budget.div_euclid(4) {
            head = format!("{prefix}{fence}");
        }
        let tail = continuation(prefix) + &fence;
        if fence.len() > 3 {
            let fences: i64 = self.count.count(&[&head, &tail])?.iter().sum();
            if fences * 2 > self.budget {
                return Ok(None);
            }
        }
        Ok(Some((head, tail)))
    }

    /// A table: parts of rows under its header and delimiter rows; lines and words when it
    /// has fewer than three lines or a header too large to repeat.
    pub fn table(&mut self) -> Result<Vec<Piece>, C::Error> {
        let text = self.text;
        let spans = lines(text, 0, text.len());
        if spans.len() < 3 {
            return self.structured(LINES_THEN_WORDS, &[]);
        }
        let head = &text[..spans[1].1];
        if self.count.count_one(head)? * 2 > self.budget {
            return self.structured(LINES_THEN_WORDS, &[]);
        }
        let f = Frame {
            head,
            tail: "",
            body: (spans[2].0, text.len()),
            first_s: 0,
            last_e: text.len(),
        };
        self.wrapped(&f, LINES_THEN_WORDS)
    }

    /// A table inside a quote or list item (text[a..b], body rows from `rows`): one piece
    /// when it fits, else parts of rows under its header and delimiter rows (their
    /// container markers kept), or lines when even the header is too large to repeat.
    pub fn nested_table(
        &mut self,
        a: usize,
        b: usize,
        rows: usize,
    ) -> Result<Vec<Piece>, C::Error> {
        let whole = self.whole(a, b)?;
        if whole.tokens <= self.budget {
            return Ok(vec![whole]);
        }
        let (base, end) = (whole.start, whole.end);
        let text = self.text;
        let head = text[base..rows].trim_end_matches(['\r', '\n']);
        if self.count.count_one(head)? * 2 > self.budget {
            return self.fine(a, b, &[], LINES_THEN_WORDS);
        }
        let f = Frame {
            head,
            tail: "",
            body: (rows, end),
            first_s: base,
            last_e: end,
        };
        self.wrapped(&f, LINES_THEN_WORDS)
    }
}

/// The source from the first piece's line start to the last piece's end: verbatim, but
/// for whitespace runs longer than `limit` (see `gap`).
fn body(text: &str, pieces: &[Counted], limit: usize) -> String {
    let (first, end, _) = pieces[0];
    let mut out = String::new();
    out.push_str(&gap(text, line_start(text, first), first, limit));
    out.push_str(&text[first..end]);
    for w in pieces.windows(2) {
        let ((_, prev_end, _), (a, b, _)) = (w[0], w[1]);
        out.push_str(&gap(text, prev_end, a, limit));
        out.push_str(&text[a..b]);
    }
    out
}
