//! The fork/join workloads (see `actorium-bench/BENCHMARKS.md`, "Fork/join"), written once over a
//! [`Ctx`], the one thing a fork/join library must offer: `join` of two closures. actorium
//! (`actorium-bench`'s `actorium_impl`), rayon, chili and the sequential baseline each provide a
//! `Ctx`, so every Rust system runs exactly the same code.

use crate::common::{matrices, param, positive, XorShift};
use std::collections::BTreeMap;
use std::time::Instant;

/// A fork/join context: runs two closures, possibly in parallel. The closures get the context
/// back (chili passes its scope down; the others are stateless).
pub trait Ctx {
    fn join<RA: Send, RB: Send>(
        &mut self,
        a: impl FnOnce(&mut Self) -> RA + Send,
        b: impl FnOnce(&mut Self) -> RB + Send,
    ) -> (RA, RB);
}

/// The sequential baseline: `a` then `b`.
pub struct Seq;

impl Ctx for Seq {
    #[inline]
    fn join<RA: Send, RB: Send>(
        &mut self,
        a: impl FnOnce(&mut Self) -> RA + Send,
        b: impl FnOnce(&mut Self) -> RB + Send,
    ) -> (RA, RB) {
        (a(self), b(self))
    }
}

/// rayon's `join`.
pub struct Rayon;

impl Ctx for Rayon {
    #[inline]
    fn join<RA: Send, RB: Send>(
        &mut self,
        a: impl FnOnce(&mut Self) -> RA + Send,
        b: impl FnOnce(&mut Self) -> RB + Send,
    ) -> (RA, RB) {
        rayon::join(|| a(&mut Rayon), || b(&mut Rayon))
    }
}

/// chili's `Scope::join` (heartbeat scheduling).
#[repr(transparent)]
pub struct Chili<'s>(pub chili::Scope<'s>);

impl Ctx for Chili<'_> {
    #[inline]
    fn join<RA: Send, RB: Send>(
        &mut self,
        a: impl FnOnce(&mut Self) -> RA + Send,
        b: impl FnOnce(&mut Self) -> RB + Send,
    ) -> (RA, RB) {
        self.0.join(
            // SAFETY: `Chili` is a transparent wrapper of the scope chili hands to the closure;
            // the closure only uses it during the call.
            |s| a(unsafe { &mut *(s as *mut chili::Scope<'_>).cast::<Chili<'_>>() }),
            // SAFETY: as above.
            |s| b(unsafe { &mut *(s as *mut chili::Scope<'_>).cast::<Chili<'_>>() }),
        )
    }
}

/// A fork/join workload with its input, built before the clock starts.
pub enum Work {
    Fib {
        n: u64,
    },
    Quicksort {
        data: Vec<u64>,
        cutoff: usize,
    },
    NQueens {
        n: u32,
    },
    MatMul {
        n: usize,
        x: Placed,
        y: Placed,
        z: Placed,
        threshold: usize,
    },
    TreeSum {
        tree: Node,
        reps: u64,
    },
}

/// The workloads' names.
pub const BENCHES: &[&str] = &[
    "fib",
    "quicksort",
    "nqueens",
    "matmul",
    "tree-sum-small",
    "tree-sum-big",
];

impl Work {
    /// Builds the input of `bench`.
    pub fn parse(bench: &str, p: &BTreeMap<String, u64>) -> Result<Work, String> {
        Ok(match bench {
            "fib" => Work::Fib { n: param(p, "n")? },
            "quicksort" => {
                let n = positive(p, "n")?;
                let mut r = XorShift::new(42);
                Work::Quicksort {
                    data: (0..n).map(|_| r.below(1 << 62)).collect(),
                    cutoff: positive(p, "cutoff")? as usize,
                }
            }
            "nqueens" => Work::NQueens {
                n: positive(p, "n")? as u32,
            },
            "matmul" => {
                let n = positive(p, "n")? as usize;
                let (x, y) = matrices(n);
                Work::MatMul {
                    n,
                    x: Placed::copy(&x, 0),
                    y: Placed::copy(&y, 1),
                    z: Placed::zeroed(n * n, 2),
                    threshold: positive(p, "threshold")? as usize,
                }
            }
            "tree-sum-small" => Work::TreeSum {
                tree: Node::tree(positive(p, "nodes")?),
                reps: positive(p, "reps")?,
            },
            "tree-sum-big" => Work::TreeSum {
                tree: Node::tree((1u64 << positive(p, "depth")?) - 1),
                reps: 1,
            },
            other => return Err(format!("n/a: `{other}` is not a fork/join workload")),
        })
    }

    /// Runs the workload on `c` (on a worker of its pool, for pooled systems): returns the
    /// seconds of the timed part and the checksum (verified outside the clock).
    pub fn run<C: Ctx>(self, c: &mut C) -> (f64, u64) {
        match self {
            Work::Fib { n } => {
                let t = Instant::now();
                let r = fib(c, n);
                (t.elapsed().as_secs_f64(), r)
            }
            Work::Quicksort { mut data, cutoff } => {
                let t = Instant::now();
                quicksort(c, &mut data, cutoff);
                let secs = t.elapsed().as_secs_f64();
                let sorted = data.windows(2).all(|w| w[0] <= w[1]);
                (
                    secs,
                    if sorted {
                        data.iter().fold(0u64, |a, &x| a.wrapping_add(x))
                    } else {
                        0
                    },
                )
            }
            Work::NQueens { n } => {
                let t = Instant::now();
                let r = queens(c, n, 0, 0, 0, 0);
                (t.elapsed().as_secs_f64(), r)
            }
            Work::MatMul {
                n,
                x,
                y,
                mut z,
                threshold,
            } => {
                let t = Instant::now();
                // SAFETY: three n×n row-major matrices, `z` written only through this view.
                unsafe {
                    matmul(
                        c,
                        View::new(x.slice().as_ptr(), n),
                        View::new(y.slice().as_ptr(), n),
                        View::new(z.slice_mut().as_mut_ptr(), n),
                        n,
                        threshold,
                    )
                };
                let secs = t.elapsed().as_secs_f64();
                (secs, z.slice().iter().fold(0u64, |a, &v| a.wrapping_add(v)))
            }
            Work::TreeSum { tree, reps } => {
                let t = Instant::now();
                let mut total = 0u64;
                for _ in 0..reps {
                    // Opaque, so the sequential baseline cannot hoist the sum out of the loop.
                    total = total.wrapping_add(tree_sum(c, std::hint::black_box(&tree)));
                }
                let secs = t.elapsed().as_secs_f64();
                drop(tree);
                (secs, total)
            }
        }
    }
}

/// The checksum a correct run of a fork/join workload produces.
pub fn expected(bench: &str, p: &BTreeMap<String, u64>) -> Option<u64> {
    let g = |k: &str| p.get(k).copied();
    Some(match bench {
        "fib" => {
            let (mut a, mut b) = (0u64, 1u64);
            for _ in 0..g("n")? {
                (a, b) = (b, a.wrapping_add(b));
            }
            a
        }
        "quicksort" => {
            let mut r = XorShift::new(42);
            (0..g("n")?).fold(0u64, |a, _| a.wrapping_add(r.below(1 << 62)))
        }
        "nqueens" => *[
            1u64, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
        ]
        .get(g("n")? as usize)?,
        "matmul" => crate::common::expected_checksum("matrix", p),
        "tree-sum-small" => {
            let n = g("nodes")?;
            g("reps")?.wrapping_mul(n * (n - 1) / 2)
        }
        "tree-sum-big" => {
            let n = (1u64 << g("depth")?) - 1;
            n * (n - 1) / 2
        }
        _ => return None,
    })
}

/// fib(n) with no sequential cutoff: every call above the leaves is a join.
pub fn fib<C: Ctx>(c: &mut C, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = c.join(|c| fib(c, n - 1), |c| fib(c, n - 2));
    a + b
}

/// Quicksort, sequential (`sort_unstable`) at `cutoff` elements and below.
pub fn quicksort<C: Ctx>(c: &mut C, v: &mut [u64], cutoff: usize) {
    if v.len() <= cutoff.max(2) {
        v.sort_unstable();
        return;
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    c.join(
        |c| quicksort(c, l, cutoff),
        |c| quicksort(c, &mut r[1..], cutoff),
    );
}

/// Lomuto partition around the median of three; returns the pivot's final index.
fn partition(v: &mut [u64]) -> usize {
    let (last, mid) = (v.len() - 1, v.len() / 2);
    if v[mid] < v[0] {
        v.swap(mid, 0);
    }
    if v[last] < v[0] {
        v.swap(last, 0);
    }
    if v[mid] < v[last] {
        v.swap(mid, last);
    }
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

/// N-queens solutions below the current placement (`cols`, `d1`, `d2`: attacked columns and
/// diagonals as bit masks), the candidate squares of the row split in halves by joins down to
/// one square each.
pub fn queens<C: Ctx>(c: &mut C, n: u32, row: u32, cols: u32, d1: u32, d2: u32) -> u64 {
    if row == n {
        return 1;
    }
    let all = (1u32 << n) - 1;
    let free = all & !(cols | d1 | d2);
    place(c, n, row, cols, d1, d2, free)
}

fn place<C: Ctx>(c: &mut C, n: u32, row: u32, cols: u32, d1: u32, d2: u32, free: u32) -> u64 {
    match free.count_ones() {
        0 => 0,
        1 => {
            let bit = free;
            queens(c, n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
        }
        k => {
            // The lowest k/2 candidates, and the rest.
            let mut low = 0u32;
            let mut rest = free;
            for _ in 0..k / 2 {
                let b = rest & rest.wrapping_neg();
                low |= b;
                rest &= !b;
            }
            let (a, b) = c.join(
                |c| place(c, n, row, cols, d1, d2, low),
                |c| place(c, n, row, cols, d1, d2, rest),
            );
            a + b
        }
    }
}

/// A square block of a row-major matrix: its top-left element and the matrix's row length.
#[derive(Clone, Copy)]
pub struct View {
    p: *mut u64,
    stride: usize,
}

// SAFETY: views are only written (`z`) through disjoint quadrants, and read (`x`, `y`) by many.
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

impl View {
    fn new(p: *const u64, stride: usize) -> Self {
        View {
            p: p.cast_mut(),
            stride,
        }
    }

    /// The quadrant (`qi`, `qj`) of a block of size `2h`.
    fn quad(self, qi: usize, qj: usize, h: usize) -> Self {
        // SAFETY (of later uses): inside the same matrix.
        View {
            p: self.p.wrapping_add(qi * h * self.stride + qj * h),
            stride: self.stride,
        }
    }
}

/// Savina's recursive matrix multiply: `z += x · y` on `n × n` blocks, split in quadrants
/// (eight products in two rounds of four, so that no two write the same quadrant at once)
/// until a block holds at most `threshold` elements.
///
/// # Safety
/// The views are `n × n` blocks inside live matrices; no other thread writes `z`'s block.
pub unsafe fn matmul<C: Ctx>(c: &mut C, x: View, y: View, z: View, n: usize, threshold: usize) {
    if n * n <= threshold || n % 2 == 1 {
        // SAFETY: the caller's contract.
        unsafe { leaf(x, y, z, n) };
        return;
    }
    let h = n / 2;
    for round in 0..2 {
        // Round 0: z_ij += x_i0 · y_0j; round 1: z_ij += x_i1 · y_1j.
        let q = |i: usize, j: usize| (x.quad(i, round, h), y.quad(round, j, h), z.quad(i, j, h));
        let (a, b, cc, d) = (q(0, 0), q(0, 1), q(1, 0), q(1, 1));
        // The four products write four disjoint quadrants of `z` (each `h × h` inside the
        // caller's blocks), and only read `x` and `y`.
        let product = |c: &mut C, q: (View, View, View)| {
            // SAFETY: as just said: the caller's contract holds for each quadrant.
            unsafe { matmul(c, q.0, q.1, q.2, h, threshold) }
        };
        c.join(
            |c| c.join(|c| product(c, a), |c| product(c, b)),
            |c| c.join(|c| product(c, cc), |c| product(c, d)),
        );
    }
}

/// A matrix of the matmul workload where every Rust system has it: written before the clock
/// (its pages faulted in: `vec![0; ..]` gets lazily zeroed pages from the kernel, whose
/// first-touch faults, taken inside the timed part by two workers at once, had cost 20 ms of
/// 117 on 2 threads), and starting `slot` × 33 cache lines past a 2 MiB boundary, so that its
/// offset within a page is fixed: rows start on cache lines (a large `Vec` from `mmap` starts 16
/// bytes past a page, and its rows straddled lines) and use the same level-1 cache sets in every
/// system. Left to the allocator, that depended on what the system had allocated before, and
/// moved one executor's time by 9 % between two builds with the same fork/join code.
pub struct Placed {
    buf: Vec<u64>,
    start: usize,
    len: usize,
}

impl Placed {
    const ALIGN: usize = 2 << 20;

    fn zeroed(len: usize, slot: usize) -> Self {
        let offset = slot * 33 * 64;
        let mut buf = vec![0u64; len + (Self::ALIGN + offset) / 8];
        for v in buf.iter_mut() {
            // SAFETY: a valid, exclusive reference; volatile so that the pages are written.
            unsafe { std::ptr::write_volatile(v, 0) };
        }
        let addr = buf.as_ptr() as usize;
        let start = ((Self::ALIGN - addr % Self::ALIGN) % Self::ALIGN + offset) / 8;
        Placed { buf, start, len }
    }

    fn copy(from: &[u64], slot: usize) -> Self {
        let mut p = Self::zeroed(from.len(), slot);
        p.slice_mut().copy_from_slice(from);
        p
    }

    fn slice(&self) -> &[u64] {
        &self.buf[self.start..self.start + self.len]
    }

    fn slice_mut(&mut self) -> &mut [u64] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// The leaf of [`matmul`], compiled for the CPU it runs on: with AVX-512 (its 64-bit vector
/// multiply, `vpmullq`) where the CPU has it, as Java's JIT compiles `ForkJoinBench`'s leaf for
/// its host and g++ (`-O3 -march=native`) the TBB peer's, so that the matmul row compares
/// runtimes, not code generation. (Built for baseline x86-64 only, the Rust leaf has no vector
/// 64-bit multiply: 437 ms on one thread, where Java took 412.) Every Rust system runs this
/// leaf.
///
/// # Safety
/// As [`matmul`]'s, for one `n × n` block.
unsafe fn leaf(x: View, y: View, z: View, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        // SAFETY: the CPU has the features the function is compiled for (just checked); the
        // rest is the caller's contract.
        return unsafe { leaf_avx512(x, y, z, n) };
    }
    // SAFETY: the caller's contract.
    unsafe { leaf_body(x, y, z, n) }
}

/// [`leaf_body`] compiled with AVX-512.
///
/// # Safety
/// The CPU has AVX-512 F, DQ and VL; otherwise as [`leaf`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
unsafe fn leaf_avx512(x: View, y: View, z: View, n: usize) {
    // SAFETY: the caller's contract.
    unsafe { leaf_body(x, y, z, n) }
}

/// `z += x · y` on one `n × n` block, row by row.
///
/// # Safety
/// As [`leaf`].
#[inline(always)]
unsafe fn leaf_body(x: View, y: View, z: View, n: usize) {
    for i in 0..n {
        // SAFETY: rows of the blocks (the caller's contract); `z`'s row is written by this
        // call only, `x` and `y` are only read. As slices, the rows do not alias, so the
        // inner loop vectorises.
        let zi = unsafe { std::slice::from_raw_parts_mut(z.p.add(i * z.stride), n) };
        // SAFETY: row `i` of `x`'s block, only read (the caller's contract).
        let xi = unsafe { std::slice::from_raw_parts(x.p.add(i * x.stride), n) };
        for (k, &xik) in xi.iter().enumerate() {
            // SAFETY: row `k` of `y`'s block, only read (the caller's contract).
            let yk = unsafe { std::slice::from_raw_parts(y.p.add(k * y.stride), n) };
            for (zij, &ykj) in zi.iter_mut().zip(yk) {
                *zij = zij.wrapping_add(xik.wrapping_mul(ykj));
            }
        }
    }
}

/// A binary tree node (chili's and spice's benchmark tree).
pub struct Node {
    value: u64,
    left: Option<Box<Node>>,
    right: Option<Box<Node>>,
}

impl Node {
    /// A balanced tree of `n` nodes holding the values `0..n`.
    pub fn tree(n: u64) -> Node {
        fn build(lo: u64, hi: u64) -> Option<Box<Node>> {
            (lo < hi).then(|| {
                let mid = lo + (hi - lo) / 2;
                Box::new(Node {
                    value: mid,
                    left: build(lo, mid),
                    right: build(mid + 1, hi),
                })
            })
        }
        *build(0, n).expect("at least one node")
    }
}

impl Drop for Node {
    // Iterative, so that dropping a deep tree cannot overflow the stack.
    fn drop(&mut self) {
        let mut stack: Vec<Box<Node>> = self
            .left
            .take()
            .into_iter()
            .chain(self.right.take())
            .collect();
        while let Some(mut n) = stack.pop() {
            stack.extend(n.left.take());
            stack.extend(n.right.take());
        }
    }
}

/// The sum of a tree's values, a join per node.
pub fn tree_sum<C: Ctx>(c: &mut C, node: &Node) -> u64 {
    match (&node.left, &node.right) {
        (Some(l), Some(r)) => {
            let (a, b) = c.join(|c| tree_sum(c, l), |c| tree_sum(c, r));
            node.value + a + b
        }
        (Some(l), None) => node.value + tree_sum(c, l),
        (None, Some(r)) => node.value + tree_sum(c, r),
        (None, None) => node.value,
    }
}

/// Runs `bench` once on `system` (`sequential`, `rayon` or `chili`) with `threads` threads.
pub fn run(
    system: &str,
    bench: &str,
    threads: usize,
    p: &BTreeMap<String, u64>,
) -> Result<(f64, u64), String> {
    let work = Work::parse(bench, p)?;
    Ok(match system {
        "sequential" => work.run(&mut Seq),
        "rayon" => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| e.to_string())?
            .install(|| work.run(&mut Rayon)),
        "chili" => {
            // `thread_count` counts the calling thread, which runs the root.
            let pool = chili::ThreadPool::with_config(chili::Config {
                thread_count: std::num::NonZero::new(threads),
                ..Default::default()
            });
            let r = work.run(&mut Chili(pool.scope()));
            r
        }
        other => return Err(format!("unknown fork/join system `{other}`")),
    })
}
