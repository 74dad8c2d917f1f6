//! The worker set: how many workers there are and which queue slots each one owns.
//!
//! Everything sized by the number of workers lives behind this one structure, so that adding
//! and removing workers at run time (seed 003, "Manual Resizing") changes one thing.

use std::ops::Range;

/// Which contiguous range of queue slots each worker owns.
#[derive(Debug, Clone)]
pub(crate) struct WorkerSet {
    ranges: Box<[Range<usize>]>,
}

impl WorkerSet {
    /// Splits `queues` slots over `workers` workers as the seed does: `queues / workers` each,
    /// and the first `queues % workers` workers take one more.
    pub(crate) fn partition(queues: usize, workers: usize) -> Self {
        assert!(workers > 0 && queues >= workers);
        let (base, extra) = (queues / workers, queues % workers);
        let mut start = 0;
        let ranges = (0..workers)
            .map(|i| {
                let len = base + usize::from(i < extra);
                let r = start..start + len;
                start += len;
                r
            })
            .collect();
        Self { ranges }
    }

    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    pub(crate) fn range(&self, worker: usize) -> Range<usize> {
        self.ranges[worker].clone()
    }

    /// The worker whose range holds `slot`.
    pub(crate) fn owner_of(&self, slot: usize) -> usize {
        self.ranges.partition_point(|r| r.end <= slot)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn partition_is_contiguous_and_complete() {
        for workers in 1..9 {
            for queues in workers..70 {
                let set = WorkerSet::partition(queues, workers);
                let mut next = 0;
                for w in 0..workers {
                    let r = set.range(w);
                    assert_eq!(r.start, next);
                    assert!(r.len() == queues / workers || r.len() == queues / workers + 1);
                    for s in r.clone() {
                        assert_eq!(set.owner_of(s), w);
                    }
                    next = r.end;
                }
                assert_eq!(next, queues);
            }
        }
    }
}
