//! How the queue-pointer array is divided among the workers: worker `i` owns a contiguous range
//! of slots, as the Cforall actor system prescribes (Colby Parsons, MMath thesis, Waterloo
//! 2023): `M / N` each, and the first `M % N` workers one more. The ranges are kept in the
//! worker table (each worker's slot holds its own).

use std::ops::Range;

/// Splits `queues` slots over `workers` workers.
pub(crate) fn partition(queues: usize, workers: usize) -> Vec<Range<usize>> {
    assert!(workers > 0 && queues >= workers);
    (0..workers).map(|i| range_of(queues, workers, i)).collect()
}

/// Worker `i`'s range in [`partition`]`(queues, workers)`, without building the others.
#[inline]
pub(crate) fn range_of(queues: usize, workers: usize, i: usize) -> Range<usize> {
    let (base, extra) = (queues / workers, queues % workers);
    let start = i * base + i.min(extra);
    start..start + base + usize::from(i < extra)
}

/// The worker whose range (in `ranges`, ordered and contiguous) holds `slot`.
pub(crate) fn owner_of<'a>(
    ranges: impl IntoIterator<Item = &'a Range<usize>>,
    slot: usize,
) -> usize {
    ranges
        .into_iter()
        .position(|r| r.contains(&slot))
        .expect("every slot is in a range")
}
