//! The Savina workloads' shared rules, so that every peer computes the same thing: the
//! dictionary's map and requests, the banking transfers, the logistic map, the busy loop, the
//! bounded buffer's book-keeping, the smokers' rounds.

/// The dictionary actor's map: [`DictMap::apply`] answers one request.
#[derive(Default)]
pub struct DictMap(std::collections::HashMap<u64, u64>);

impl DictMap {
    /// `Some(value)`: store it, answer 0; `None`: answer the stored value (0 if none).
    #[inline]
    pub fn apply(&mut self, key: u64, value: Option<u64>) -> u64 {
        match value {
            Some(v) => {
                self.0.insert(key, v);
                0
            }
            None => self.0.get(&key).copied().unwrap_or(0),
        }
    }
}

/// The logistic-map master's bookkeeping: which term it is at, and the answers of this term.
pub struct TermRounds {
    series: u64,
    terms: u64,
    step: u64,
    reported: u64,
    sum: u64,
}

/// What the master does after an answer.
pub enum Round {
    /// Wait for the other series.
    Wait,
    /// Send the next `NextTerm` round.
    Next,
    /// Report this checksum.
    Done(u64),
}

impl TermRounds {
    pub fn new(series: u64, terms: u64) -> Self {
        Self {
            series,
            terms,
            step: 0,
            reported: 0,
            sum: 0,
        }
    }

    /// At the start: `Some(checksum)` if there is no term to compute (the first terms' sum),
    /// else `None` (send the first round).
    pub fn start(&self) -> Option<u64> {
        (self.terms == 0).then(|| (0..self.series).map(logmap_start).sum())
    }

    /// A series answered `x` for the current term.
    pub fn answer(&mut self, x: u64) -> Round {
        self.reported += 1;
        if self.step + 1 == self.terms {
            self.sum += x;
        }
        if self.reported < self.series {
            return Round::Wait;
        }
        self.reported = 0;
        self.step += 1;
        if self.step < self.terms {
            Round::Next
        } else {
            Round::Done(self.sum)
        }
    }
}

/// The logistic-map workload's modulus (a prime): terms are integers below it.
pub const LOGMAP_M: u64 = 1_000_003;

/// Series `s`'s first term.
#[inline]
pub fn logmap_start(s: u64) -> u64 {
    s % LOGMAP_M + 1
}

/// The next term of series `s` (rate `3 + s`): `(r·x mod M)·(M − x) mod M`, the logistic map
/// `r·x·(1 − x)` in integers (so every implementation computes the same terms).
#[inline]
pub fn logmap_next(s: u64, x: u64) -> u64 {
    (3 + s) % LOGMAP_M * x % LOGMAP_M * (LOGMAP_M - x) % LOGMAP_M
}

/// Every account's balance at the start of the banking workload.
pub const BANK_INITIAL: u64 = 1_000_000_000;

/// The banking workload's `t`-th transfer among `accounts` accounts: `(from, to, amount)`,
/// with `from != to` (arithmetic, so every implementation makes the same sequence).
#[inline]
pub fn bank_transfer(t: u64, accounts: u64) -> (u64, u64, u64) {
    let from = t * 7_919 % accounts;
    let to = (from + 1 + t * 104_729 % (accounts - 1)) % accounts;
    (from, to, t % 100 + 1)
}

/// The banking checksum: `Σ (i + 1) × balance_i` over the final balances.
pub fn bank_checksum(balances: impl Iterator<Item = (u64, u64)>) -> u64 {
    balances.fold(0u64, |s, (i, b)| s.wrapping_add((i + 1).wrapping_mul(b)))
}

/// The Park–Miller modulus of [`busy`] (2³¹ − 1, a prime).
pub const BUSY_M: u64 = 2_147_483_647;

/// The unit of work of bounded-buffer, sleeping-barber and cigarette-smokers (Savina's busy
/// waits, made deterministic): `n` steps of the Park–Miller generator `y ← 48,271·y mod (2³¹ − 1)`
/// from `y = x mod (2³¹ − 2) + 1`. Every value stays below 2⁴⁷, so C++ and Erlang compute the
/// same result without overflow or big numbers.
#[inline]
pub fn busy(x: u64, n: u64) -> u64 {
    let mut y = x % (BUSY_M - 1) + 1;
    for _ in 0..n {
        y = y * 48_271 % BUSY_M;
    }
    y
}

/// bounded-buffer: item `i` (from 0) of producer `p`, each making `items` items.
#[inline]
pub fn bb_item(p: u64, i: u64, items: u64, cost: u64) -> u64 {
    busy(p * items + i, cost)
}

/// bounded-buffer: the manager's bookkeeping, as `BENCHMARKS.md` specifies it; each step says
/// what the manager sends ([`BbSend`]).
pub struct BbBook {
    /// Consumers with nothing to do, oldest first.
    available: std::collections::VecDeque<usize>,
    buffer: std::collections::VecDeque<u64>,
    capacity: usize,
    /// Items that found the buffer full, with their producers, in arrival order.
    waiting: std::collections::VecDeque<(u64, usize)>,
    producers: usize,
    producers_done: usize,
    consumers: usize,
}

/// What the manager sends after one step, in this order: item `consume.1` to consumer
/// `consume.0`, then `Produce` to producer `produce`; with `finished` (every producer done,
/// nothing buffered, every consumer idle) it asks every consumer for its sum and ends.
#[derive(Default)]
pub struct BbSend {
    pub consume: Option<(usize, u64)>,
    pub produce: Option<usize>,
    pub finished: bool,
}

impl BbBook {
    /// Every consumer available (in index order), nothing buffered.
    pub fn new(producers: usize, consumers: usize, capacity: usize) -> Self {
        BbBook {
            available: (0..consumers).collect(),
            buffer: std::collections::VecDeque::with_capacity(capacity),
            capacity,
            waiting: std::collections::VecDeque::new(),
            producers,
            producers_done: 0,
            consumers,
        }
    }

    /// Producer `p` made item `x`: to the first available consumer, else into the buffer,
    /// else it waits (and its producer is not asked for more yet).
    pub fn item(&mut self, x: u64, p: usize) -> BbSend {
        if let Some(c) = self.available.pop_front() {
            BbSend {
                consume: Some((c, x)),
                produce: Some(p),
                finished: false,
            }
        } else if self.buffer.len() < self.capacity {
            self.buffer.push_back(x);
            BbSend {
                produce: Some(p),
                ..BbSend::default()
            }
        } else {
            self.waiting.push_back((x, p));
            BbSend::default()
        }
    }

    /// Consumer `c` is available: the oldest buffered item, and the oldest waiting item moves
    /// into the buffer (its producer is asked for the next); else `c` waits.
    pub fn available(&mut self, c: usize) -> BbSend {
        match self.buffer.pop_front() {
            Some(x) => {
                let produce = self.waiting.pop_front().map(|(y, p)| {
                    self.buffer.push_back(y);
                    p
                });
                BbSend {
                    consume: Some((c, x)),
                    produce,
                    finished: false,
                }
            }
            None => {
                self.available.push_back(c);
                self.check()
            }
        }
    }

    /// A producer made all its items.
    pub fn producer_done(&mut self) -> BbSend {
        self.producers_done += 1;
        self.check()
    }

    fn check(&self) -> BbSend {
        BbSend {
            finished: self.producers_done == self.producers
                && self.buffer.is_empty()
                && self.available.len() == self.consumers,
            ..BbSend::default()
        }
    }
}

/// cigarette-smokers: round `r`'s smoker and smoking time (`busy` steps).
#[inline]
pub fn cig_round(r: u64, smokers: u64, smoke: u64) -> (u64, u64) {
    (r * 7_919 % smokers, r * 104_729 % smoke + 10)
}

/// The dictionary workload (Savina's concurrent dictionary): whether a worker's `i`-th request
/// is a write (`write` percent of them, the first one included).
#[inline]
pub fn dict_is_write(i: u64, write: u64) -> bool {
    i * write % 100 < write
}

/// A worker's `i`-th request of the dictionary workload: `(key, Some(value))` to write, or
/// `(key, None)` to read the key of its last write (`last`, updated here). The reply to a
/// write is 0; to a read, the value stored (`last + 1`), so the checksum does not depend on
/// how the workers interleave (each worker reads only its own keys).
#[inline]
pub fn dict_request(
    worker: u64,
    msgs: u64,
    i: u64,
    write: u64,
    last: &mut u64,
) -> (u64, Option<u64>) {
    if dict_is_write(i, write) {
        *last = i;
        (worker * msgs + i, Some(i + 1))
    } else {
        (worker * msgs + *last, None)
    }
}
