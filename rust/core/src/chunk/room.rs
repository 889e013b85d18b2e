//! The room each section leaves for text beside its longest context header.

use std::collections::HashSet;

use super::prepare::{Context, DocBlock};
use super::{Counting, Failure, Policy};
use crate::chunk::context::{clip, header_line};
use crate::chunk::pack::SEP;

/// Per section (numbered from 0): the cap left for text once its longest context header is
/// in, and for a header that alone would take over a quarter of max_tokens, the character
/// limit it is clipped to (None: not clipped).
#[allow(clippy::type_complexity)]
pub fn header_room<C: Counting>(
    blocks: &[DocBlock],
    numbers: &[u32],
    ctx: &Context,
    policy: &Policy,
    counting: &mut C,
) -> Result<(Vec<i64>, Vec<Option<usize>>), Failure<C::Error>> {
    let n_sections = numbers.last().map_or(0, |&s| s as usize + 1);
    let mut heads: Vec<String> = vec![String::new(); n_sections];
    let mut lengths: Vec<usize> = vec![0; n_sections];
    let mut seen: HashSet<(usize, u32)> = HashSet::new();
    for (b, &sec) in blocks.iter().zip(numbers) {
        if !seen.insert((b.path, sec)) {
            continue; // blocks under one heading share the path
        }
        let line = match ctx.on {
            true => header_line(&ctx.title, &strs(&ctx.paths[b.path])),
            false => String::new(),
        };
        let fields: &[String] = if sec == numbers[0] { &ctx.fields } else { &[] };
        let head = std::iter::once(&line)
            .chain(fields)
            .filter(|x| !x.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        let len = head.chars().count();
        if len >= lengths[sec as usize] {
            (heads[sec as usize], lengths[sec as usize]) = (head, len);
        }
    }
    let mut counts = if heads.iter().any(|h| !h.is_empty()) {
        counting
            .count(false, &strs(&heads))
            .map_err(Failure::Count)?
    } else {
        vec![0; n_sections]
    };
    let budget = (policy.max.div_euclid(4)).max(1);
    let mut limits = vec![None; n_sections];
    for i in 0..n_sections {
        while counts[i] > budget {
            let len = heads[i].chars().count() as i64;
            let limit = (((len * budget) as f64 / counts[i] as f64) as i64 - 2).max(0) as usize;
            limits[i] = Some(limit);
            heads[i] = clip(&heads[i], limit);
            counts[i] = counting
                .count(false, &[heads[i].as_str()])
                .map_err(Failure::Count)?[0];
        }
    }
    let room = policy.max - counting.added();
    let cap = heads
        .iter()
        .zip(&counts)
        .map(|(h, &n)| room - if h.is_empty() { 0 } else { n + SEP })
        .collect();
    Ok((cap, limits))
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
