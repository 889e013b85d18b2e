//! Readers of a block's inline events: the walk hands a heading's inner events, or those
//! of a paragraph that may be one image, to a reader until it has seen enough. A heading's
//! reader gathers its text.

use std::ops::Range;

use pulldown_cmark::{Event, Tag, TagEnd};

use super::{nested_from, no_end, Events};
use crate::parse::{Block, Fallback};
use crate::pyunicode::{collapse, strip};

/// What an inline reader sees of an event besides Start and End.
pub(super) enum Leaf<'e> {
    Text(&'e str),
    Code(&'e str),
    Break,
    Other,
}

pub(super) trait Inline {
    fn start(&mut self, tag: &Tag, rng: &Range<usize>) -> bool;
    fn end(&mut self, tag: &TagEnd) -> bool;
    fn leaf(&mut self, leaf: Leaf, rng: &Range<usize>) -> bool;
    fn close(&mut self, block: &mut Block);
}

/// Hands a block's inner events to `reader` until it has seen enough, then reads on to
/// the block's end.
pub(super) fn inline(
    events: &mut Events,
    block: &mut Block,
    reader: &mut dyn Inline,
) -> Result<usize, Fallback> {
    let mut depth = 1;
    while let Some((ev, rng)) = events.next() {
        let alive = match &ev {
            Event::Start(tag) => {
                depth += 1;
                reader.start(tag, &rng)
            }
            Event::End(tag) => {
                depth -= 1;
                if depth == 0 {
                    reader.close(block);
                    return Ok(rng.end);
                }
                reader.end(tag)
            }
            Event::SoftBreak | Event::HardBreak | Event::Rule => reader.leaf(Leaf::Break, &rng),
            Event::Text(t) => reader.leaf(Leaf::Text(t), &rng),
            Event::Code(t) => reader.leaf(Leaf::Code(t), &rng),
            _ => reader.leaf(Leaf::Other, &rng),
        };
        if !alive {
            return nested_from(events, depth);
        }
    }
    Err(no_end())
}

/// markdown-it-py's plain_text takes its slow path on these
const SPECIAL: &[char] = &['*', '_', '`', '[', '<', '&', '\\', '!', '\n'];

/// A heading's text: text and code spans, image alt text, breaks as spaces.
pub(super) struct Heading {
    text: String,
    plain: bool,
}

impl Default for Heading {
    fn default() -> Self {
        Heading {
            text: String::new(),
            plain: true,
        }
    }
}

impl Inline for Heading {
    fn start(&mut self, _: &Tag, _: &Range<usize>) -> bool {
        self.plain = false;
        true
    }

    fn end(&mut self, _: &TagEnd) -> bool {
        true
    }

    fn leaf(&mut self, leaf: Leaf, rng: &Range<usize>) -> bool {
        match leaf {
            Leaf::Text(t) => {
                if self.plain {
                    self.plain = rng.end - rng.start == t.len();
                }
                self.text.push_str(t);
            }
            Leaf::Code(t) => {
                self.plain = false;
                self.text.push_str(t);
            }
            Leaf::Break => {
                self.plain = false;
                self.text.push(' ');
            }
            Leaf::Other => self.plain = false,
        }
        true
    }

    fn close(&mut self, block: &mut Block) {
        block.title = Some(if self.plain && !self.text.contains(SPECIAL) {
            strip(&self.text).to_owned()
        } else {
            collapse(&self.text)
        });
    }
}
