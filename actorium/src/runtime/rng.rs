//! The workers' random choices (victims, slots): a xorshift64 generator, one per worker, seeded
//! from the worker's index so that workers choose differently and runs are reproducible.

/// xorshift64 (Marsaglia 2003, shifts 13/7/17). Not for anything but load spreading.
#[derive(Debug, Clone, Copy)]
pub(crate) struct XorShift(u64);

impl XorShift {
    /// The generator of worker `index` (never zero, distinct per index).
    pub(crate) fn for_worker(index: usize) -> Self {
        Self(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    /// The next value, uniformly-ish in `0..n` (`n > 0`).
    #[inline]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }

    /// A worker other than `me` among `n >= 2`.
    #[inline]
    pub(crate) fn other_than(&mut self, me: usize, n: usize) -> usize {
        (me + 1 + self.below(n - 1)) % n
    }
}

#[cfg(all(test, not(loom)))]
#[path = "rng_tests.rs"]
mod tests;
