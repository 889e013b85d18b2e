//! Work on a batch of documents spread over threads: contiguous ranges of documents of
//! about equal size, each done by one scoped thread, the results kept in document order,
//! so the output is the same for any number of threads.

use std::ops::Range;
use std::thread;

/// `n` contiguous ranges (fewer when there are fewer items) covering `0..sizes.len()`,
/// each holding about an equal share of the total size.
pub fn ranges(sizes: &[usize], n: usize) -> Vec<Range<usize>> {
    let n = n.clamp(1, sizes.len().max(1));
    let total: usize = sizes.iter().sum::<usize>().max(1);
    let mut out = Vec::with_capacity(n);
    let (mut start, mut sum) = (0, 0);
    for (i, &size) in sizes.iter().enumerate() {
        sum += size;
        // close a range once it holds its share of what has been seen (the last range
        // takes the rest)
        if out.len() + 1 < n && sum * n >= total * (out.len() + 1) {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < sizes.len() || out.is_empty() {
        out.push(start..sizes.len());
    }
    out
}

/// `work` of each range, each on a thread of its own (the first on the calling thread),
/// results in range order. A panic in a thread is raised again here.
pub fn map<T: Send>(ranges: &[Range<usize>], work: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    if ranges.len() <= 1 {
        return ranges.iter().cloned().map(&work).collect();
    }
    thread::scope(|scope| {
        let work = &work;
        let rest: Vec<_> = ranges[1..]
            .iter()
            .cloned()
            .map(|r| scope.spawn(move || work(r)))
            .collect();
        let mut out = vec![work(ranges[0].clone())];
        for handle in rest {
            out.push(
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            );
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_item_once_in_order() {
        for n in 1..6 {
            for sizes in [
                vec![],
                vec![5],
                vec![1, 1, 1, 1, 1, 1, 1],
                vec![100, 1, 1, 1, 1, 100, 0],
            ] {
                let got = ranges(&sizes, n);
                let flat: Vec<usize> = got.iter().flat_map(|r| r.clone()).collect();
                assert_eq!(flat, (0..sizes.len()).collect::<Vec<_>>(), "{sizes:?} {n}");
                assert!(got.len() <= n.max(1));
            }
        }
    }

    #[test]
    fn ranges_share_the_size() {
        let got = ranges(&[10; 8], 2);
        assert_eq!(got, [0..4, 4..8]);
    }

    #[test]
    fn results_come_back_in_range_order() {
        let r = ranges(&[1; 100], 4);
        let sums = map(&r, |r| r.sum::<usize>());
        assert_eq!(sums.iter().sum::<usize>(), (0..100).sum::<usize>());
        assert_eq!(
            map(&r, |r| r.start),
            r.iter().map(|r| r.start).collect::<Vec<_>>()
        );
    }
}
