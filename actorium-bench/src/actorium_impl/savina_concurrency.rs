//! Workloads `dictionary`, `banking`, `logistic-map`, `bounded-buffer` (the system and its set-
//! up: the parent module).

use super::*;

// ---- dictionary (Savina's concurrent dictionary) ---------------------------------------------
struct Dictionary(actorium_peers::common::DictMap);
struct DictWorker {
    dict: Addr<Dictionary>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, Addr<DictWorker>);
struct DictReply(u64);
impl Actor for Dictionary {}
impl Actor for DictWorker {}
impl Receive<DictOp> for Dictionary {
    fn receive(
        &mut self,
        DictOp(key, value, from): DictOp,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        from.send(DictReply(self.0.apply(key, value))).unwrap();
        Allocation::Nodelete
    }
}
impl DictWorker {
    fn request(&mut self, ctx: &mut Context<'_, Self>) {
        let (key, value) = actorium_peers::common::dict_request(
            self.id,
            self.msgs,
            self.sent,
            self.write,
            &mut self.last,
        );
        self.sent += 1;
        self.dict.send(DictOp(key, value, ctx.address())).unwrap();
    }
}
impl Receive<Start> for DictWorker {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        self.request(ctx);
        Allocation::Nodelete
    }
}
impl Receive<DictReply> for DictWorker {
    fn receive(&mut self, DictReply(v): DictReply, ctx: &mut Context<'_, Self>) -> Allocation {
        self.sum += v;
        if self.sent < self.msgs {
            self.request(ctx);
            Allocation::Nodelete
        } else {
            self.done.report(self.sum);
            Allocation::Delete
        }
    }
}

pub(super) fn dictionary(s: &ActorSystem, workers: u64, msgs: u64, write: u64) -> u64 {
    let done = Done::new(workers);
    let dict = s.spawn(Dictionary(Default::default()));
    let all: Vec<_> = (0..workers)
        .map(|id| {
            s.spawn(DictWorker {
                dict: dict.clone(),
                id,
                msgs,
                write,
                sent: 0,
                last: 0,
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    for w in &all {
        w.send(Start).unwrap();
    }
    let total = done.wait();
    dict.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<Addr<Account>>>>;
struct Teller {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    reported: u64,
    sum: u64,
    done: Arc<Done>,
}
struct Account {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: Addr<Teller>,
}
struct Transfer {
    to: u64,
    amount: u64,
}
struct Credit {
    from: u64,
    amount: u64,
}
struct Credited;
struct Completed;
struct Report;
struct AccountBalance(u64, u64);
impl Actor for Teller {}
impl Actor for Account {}
impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().unwrap() {
            a.send(Report).unwrap();
        }
    }
}
impl Receive<Start> for Teller {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        let accounts = self.accounts.get().unwrap();
        for t in 0..self.transactions {
            let (from, to, amount) =
                actorium_peers::common::bank_transfer(t, accounts.len() as u64);
            accounts[from as usize]
                .send(Transfer { to, amount })
                .unwrap();
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
        Allocation::Nodelete
    }
}
impl Receive<Completed> for Teller {
    fn receive(&mut self, _: Completed, _: &mut Context<'_, Self>) -> Allocation {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
        Allocation::Nodelete
    }
}
impl Receive<AccountBalance> for Teller {
    fn receive(
        &mut self,
        AccountBalance(i, b): AccountBalance,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        self.sum = self.sum.wrapping_add((i + 1).wrapping_mul(b));
        self.reported += 1;
        if self.reported == self.accounts.get().unwrap().len() as u64 {
            self.done.report(self.sum);
        }
        Allocation::Nodelete
    }
}
impl Receive<Transfer> for Account {
    fn receive(&mut self, t: Transfer, _: &mut Context<'_, Self>) -> Allocation {
        self.balance -= t.amount;
        self.accounts.get().unwrap()[t.to as usize]
            .send(Credit {
                from: self.index,
                amount: t.amount,
            })
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Credit> for Account {
    fn receive(&mut self, c: Credit, _: &mut Context<'_, Self>) -> Allocation {
        self.balance += c.amount;
        self.accounts.get().unwrap()[c.from as usize]
            .send(Credited)
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Credited> for Account {
    fn receive(&mut self, _: Credited, _: &mut Context<'_, Self>) -> Allocation {
        self.teller.send(Completed).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Report> for Account {
    fn receive(&mut self, _: Report, _: &mut Context<'_, Self>) -> Allocation {
        self.teller
            .send(AccountBalance(self.index, self.balance))
            .unwrap();
        Allocation::Nodelete
    }
}

pub(super) fn banking(s: &ActorSystem, accounts: u64, transactions: u64) -> u64 {
    let done = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = s.spawn(Teller {
        accounts: all.clone(),
        transactions,
        completed: 0,
        reported: 0,
        sum: 0,
        done: done.clone(),
    });
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            s.spawn(Account {
                index,
                balance: actorium_peers::common::BANK_INITIAL,
                accounts: all.clone(),
                teller: teller.clone(),
            })
        })
        .collect();
    assert!(all.set(list.clone()).is_ok());
    teller.send(Start).unwrap();
    let total = done.wait();
    // The accounts hold each other's addresses (through `all`): end them explicitly.
    for a in &list {
        a.send(actorium::DeleteMsg).unwrap();
    }
    teller.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    series: Arc<OnceLock<Vec<Addr<Series>>>>,
    rounds: actorium_peers::common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    term: u64,
    computer: Addr<RateComputer>,
    master: Addr<LogMaster>,
}
struct RateComputer {
    index: u64,
}
struct NextTerm;
struct Compute(u64, Addr<Series>);
struct Computed(u64);
struct TermDone(u64);
impl Actor for LogMaster {}
impl Actor for Series {}
impl Actor for RateComputer {}
impl LogMaster {
    fn round(&self) {
        for s in self.series.get().unwrap() {
            s.send(NextTerm).unwrap();
        }
    }
}
impl Receive<Start> for LogMaster {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
        Allocation::Nodelete
    }
}
impl Receive<TermDone> for LogMaster {
    fn receive(&mut self, TermDone(x): TermDone, _: &mut Context<'_, Self>) -> Allocation {
        match self.rounds.answer(x) {
            Round::Next => self.round(),
            Round::Done(sum) => self.done.report(sum),
            Round::Wait => {}
        }
        Allocation::Nodelete
    }
}
impl Receive<NextTerm> for Series {
    fn receive(&mut self, _: NextTerm, ctx: &mut Context<'_, Self>) -> Allocation {
        self.computer
            .send(Compute(self.term, ctx.address()))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Computed> for Series {
    fn receive(&mut self, Computed(x): Computed, _: &mut Context<'_, Self>) -> Allocation {
        self.term = x;
        self.master.send(TermDone(x)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Compute> for RateComputer {
    fn receive(&mut self, Compute(x, from): Compute, _: &mut Context<'_, Self>) -> Allocation {
        from.send(Computed(actorium_peers::common::logmap_next(self.index, x)))
            .unwrap();
        Allocation::Nodelete
    }
}

pub(super) fn logistic_map(s: &ActorSystem, series: u64, terms: u64) -> u64 {
    let done = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = s.spawn(LogMaster {
        series: list.clone(),
        rounds: actorium_peers::common::TermRounds::new(series, terms),
        done: done.clone(),
    });
    let computers: Vec<_> = (0..series)
        .map(|index| s.spawn(RateComputer { index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            s.spawn(Series {
                term: actorium_peers::common::logmap_start(index),
                computer: computers[index as usize].clone(),
                master: master.clone(),
            })
        })
        .collect();
    assert!(list.set(all.clone()).is_ok());
    master.send(Start).unwrap();
    let total = done.wait();
    for a in &all {
        a.send(actorium::DeleteMsg).unwrap();
    }
    for c in &computers {
        c.send(actorium::DeleteMsg).unwrap();
    }
    master.send(actorium::DeleteMsg).unwrap();
    total
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
struct BbManager {
    producers: Vec<Addr<BbProducer>>,
    consumers: Vec<Addr<BbConsumer>>,
    book: BbBook,
}
type BbManagerAddr = Arc<OnceLock<Addr<BbManager>>>;
struct BbProducer {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: BbManagerAddr,
}
struct BbConsumer {
    index: usize,
    cost: u64,
    sum: u64,
    manager: BbManagerAddr,
    done: Arc<Done>,
}
struct Produce;
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
struct ConsumerAvailable(usize);
struct ReportSum;
impl Actor for BbManager {}
impl Actor for BbProducer {}
impl Actor for BbConsumer {}
impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: BbSend) -> Allocation {
        if let Some((c, x)) = step.consume {
            self.consumers[c].send(Consume(x)).unwrap();
        }
        if let Some(p) = step.produce {
            self.producers[p].send(Produce).unwrap();
        }
        if step.finished {
            for c in &self.consumers {
                c.send(ReportSum).unwrap();
            }
            return Allocation::Delete;
        }
        Allocation::Nodelete
    }
}
impl Receive<Start> for BbManager {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        for p in &self.producers {
            p.send(Produce).unwrap();
        }
        Allocation::Nodelete
    }
}
impl Receive<BbItem> for BbManager {
    fn receive(&mut self, BbItem(x, p): BbItem, _: &mut Context<'_, Self>) -> Allocation {
        let step = self.book.item(x, p);
        self.apply(step)
    }
}
impl Receive<ConsumerAvailable> for BbManager {
    fn receive(
        &mut self,
        ConsumerAvailable(c): ConsumerAvailable,
        _: &mut Context<'_, Self>,
    ) -> Allocation {
        let step = self.book.available(c);
        self.apply(step)
    }
}
impl Receive<ProducerDone> for BbManager {
    fn receive(&mut self, _: ProducerDone, _: &mut Context<'_, Self>) -> Allocation {
        let step = self.book.producer_done();
        self.apply(step)
    }
}
impl Receive<Produce> for BbProducer {
    fn receive(&mut self, _: Produce, _: &mut Context<'_, Self>) -> Allocation {
        let manager = self.manager.get().unwrap();
        if self.made == self.items {
            manager.send(ProducerDone).unwrap();
            // Never asked again: end (the manager's address goes with the state).
            return Allocation::Delete;
        }
        let x = bb_item(self.index, self.made, self.items, self.cost);
        self.made += 1;
        manager.send(BbItem(x, self.index as usize)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Consume> for BbConsumer {
    fn receive(&mut self, Consume(x): Consume, _: &mut Context<'_, Self>) -> Allocation {
        self.sum = self.sum.wrapping_add(busy(x, self.cost));
        self.manager
            .get()
            .unwrap()
            .send(ConsumerAvailable(self.index))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<ReportSum> for BbConsumer {
    fn receive(&mut self, _: ReportSum, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(self.sum);
        Allocation::Delete
    }
}

pub(super) fn bounded_buffer(s: &ActorSystem, p: &Params) -> u64 {
    let (producers, consumers) = (p.get("producers"), p.get("consumers") as usize);
    let (items, cost, capacity) = (p.get("items"), p.get("cost"), p.get("buffer") as usize);
    let done = Done::new(consumers as u64);
    // Every actor spawned from main, as on the peers; the manager's address reaches the others
    // through `manager` once it exists (a cycle, ended by the actors themselves at the end).
    let manager: BbManagerAddr = Arc::new(OnceLock::new());
    let producer_addrs = (0..producers)
        .map(|index| {
            s.spawn(BbProducer {
                index,
                items,
                made: 0,
                cost,
                manager: manager.clone(),
            })
        })
        .collect();
    let consumer_addrs = (0..consumers)
        .map(|index| {
            s.spawn(BbConsumer {
                index,
                cost,
                sum: 0,
                manager: manager.clone(),
                done: done.clone(),
            })
        })
        .collect();
    let m = s.spawn(BbManager {
        producers: producer_addrs,
        consumers: consumer_addrs,
        book: BbBook::new(producers as usize, consumers, capacity),
    });
    assert!(manager.set(m.clone()).is_ok());
    m.send(Start).unwrap();
    done.wait()
}
