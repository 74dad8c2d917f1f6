//! Workloads `dictionary`, `banking`, `logistic-map`, `bounded-buffer` (the system and its set-
//! up: the parent module).

use super::*;

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary {
    map: common::DictMap,
}
struct DictWorker {
    dict: ActorRef<Dictionary>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, ActorRef<DictWorker>);
struct DictReply(u64);
actor!(Dictionary, DictWorker);

impl Message<DictOp> for Dictionary {
    type Reply = ();

    async fn handle(&mut self, DictOp(key, value, from): DictOp, _: &mut Context<Self, ()>) {
        let reply = self.map.apply(key, value);
        send(&from, DictReply(reply));
    }
}

impl DictWorker {
    fn request(&mut self, me: &ActorRef<DictWorker>) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        send(&self.dict, DictOp(key, value, me.clone()));
    }
}

impl Message<Start> for DictWorker {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        self.request(ctx.actor_ref());
    }
}

impl Message<DictReply> for DictWorker {
    type Reply = ();

    async fn handle(&mut self, DictReply(v): DictReply, ctx: &mut Context<Self, ()>) {
        self.sum += v;
        if self.sent < self.msgs {
            self.request(ctx.actor_ref());
        } else {
            self.done.report(self.sum);
        }
    }
}

pub(super) async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = spawn(Dictionary {
        map: common::DictMap::default(),
    });
    let all: Vec<_> = (0..workers)
        .map(|id| {
            spawn(DictWorker {
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
    drop(done);
    for w in &all {
        send(w, Start);
    }
    let total = common::wait(rx).await?;
    for w in &all {
        stop(w).await;
    }
    stop(&dict).await;
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<ActorRef<Account>>>>;
struct Teller {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: ActorRef<Teller>,
}
struct Transfer(u64, u64);
struct Credit(u64, u64);
struct Credited;
struct Completed;
struct Report;
struct Balance(u64, u64);
actor!(Teller, Account);

impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            send(a, Report);
        }
    }
}

impl Message<Start> for Teller {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        let accounts = self.accounts.get().expect("accounts set");
        for t in 0..self.transactions {
            let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
            send(&accounts[from as usize], Transfer(to, amount));
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
    }
}

impl Message<Completed> for Teller {
    type Reply = ();

    async fn handle(&mut self, _: Completed, _: &mut Context<Self, ()>) {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
    }
}

impl Message<Balance> for Teller {
    type Reply = ();

    async fn handle(&mut self, Balance(i, b): Balance, _: &mut Context<Self, ()>) {
        self.balances.push((i, b));
        if self.balances.len() == self.accounts.get().expect("accounts set").len() {
            self.done
                .report(common::bank_checksum(self.balances.drain(..)));
        }
    }
}

impl Message<Transfer> for Account {
    type Reply = ();

    async fn handle(&mut self, Transfer(to, amount): Transfer, _: &mut Context<Self, ()>) {
        self.balance -= amount;
        send(
            &self.accounts.get().expect("accounts set")[to as usize],
            Credit(self.index, amount),
        );
    }
}

impl Message<Credit> for Account {
    type Reply = ();

    async fn handle(&mut self, Credit(from, amount): Credit, _: &mut Context<Self, ()>) {
        self.balance += amount;
        send(
            &self.accounts.get().expect("accounts set")[from as usize],
            Credited,
        );
    }
}

impl Message<Credited> for Account {
    type Reply = ();

    async fn handle(&mut self, _: Credited, _: &mut Context<Self, ()>) {
        send(&self.teller, Completed);
    }
}

impl Message<Report> for Account {
    type Reply = ();

    async fn handle(&mut self, _: Report, _: &mut Context<Self, ()>) {
        send(&self.teller, Balance(self.index, self.balance));
    }
}

pub(super) async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = spawn(Teller {
        accounts: all.clone(),
        transactions,
        completed: 0,
        balances: Vec::new(),
        done,
    });
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            spawn(Account {
                index,
                balance: common::BANK_INITIAL,
                accounts: all.clone(),
                teller: teller.clone(),
            })
        })
        .collect();
    let _ = all.set(list.clone());
    send(&teller, Start);
    let total = common::wait(rx).await?;
    for a in &list {
        stop(a).await;
    }
    stop(&teller).await;
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    series: Arc<OnceLock<Vec<ActorRef<Series>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    term: u64,
    computer: ActorRef<RateComputer>,
    master: ActorRef<LogMaster>,
}
struct RateComputer {
    index: u64,
}
struct NextTerm;
struct Compute(u64, ActorRef<Series>);
struct Computed(u64);
struct TermDone(u64);
actor!(LogMaster, Series, RateComputer);

impl LogMaster {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            send(s, NextTerm);
        }
    }
}

impl Message<Start> for LogMaster {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
    }
}

impl Message<TermDone> for LogMaster {
    type Reply = ();

    async fn handle(&mut self, TermDone(x): TermDone, _: &mut Context<Self, ()>) {
        match self.rounds.answer(x) {
            common::Round::Next => self.round(),
            common::Round::Done(sum) => self.done.report(sum),
            common::Round::Wait => {}
        }
    }
}

impl Message<NextTerm> for Series {
    type Reply = ();

    async fn handle(&mut self, _: NextTerm, ctx: &mut Context<Self, ()>) {
        send(&self.computer, Compute(self.term, ctx.actor_ref().clone()));
    }
}

impl Message<Computed> for Series {
    type Reply = ();

    async fn handle(&mut self, Computed(x): Computed, _: &mut Context<Self, ()>) {
        self.term = x;
        send(&self.master, TermDone(x));
    }
}

impl Message<Compute> for RateComputer {
    type Reply = ();

    async fn handle(&mut self, Compute(x, from): Compute, _: &mut Context<Self, ()>) {
        send(&from, Computed(common::logmap_next(self.index, x)));
    }
}

pub(super) async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = spawn(LogMaster {
        series: list.clone(),
        rounds: common::TermRounds::new(series, terms),
        done,
    });
    let computers: Vec<_> = (0..series)
        .map(|index| spawn(RateComputer { index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            spawn(Series {
                term: common::logmap_start(index),
                computer: computers[index as usize].clone(),
                master: master.clone(),
            })
        })
        .collect();
    let _ = list.set(all.clone());
    send(&master, Start);
    let total = common::wait(rx).await?;
    for a in &all {
        stop(a).await;
    }
    for c in &computers {
        stop(c).await;
    }
    stop(&master).await;
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
/// The manager's producers and consumers, set once all are spawned.
type BbPeers = Arc<OnceLock<(Vec<ActorRef<BbProducer>>, Vec<ActorRef<BbConsumer>>)>>;
struct BbManager {
    peers: BbPeers,
    book: common::BbBook,
}
struct BbProducer {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: ActorRef<BbManager>,
}
struct BbConsumer {
    index: usize,
    cost: u64,
    sum: u64,
    manager: ActorRef<BbManager>,
    done: Arc<Done>,
}
struct Produce;
/// An item and the index of its producer.
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
/// Consumer `c` is available.
struct ConsumerAvailable(usize);
struct ReportSum;
actor!(BbManager, BbProducer, BbConsumer);

impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: common::BbSend, ctx: &mut Context<Self, ()>) {
        let (producers, consumers) = self.peers.get().expect("peers set");
        if let Some((c, x)) = step.consume {
            send(&consumers[c], Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            for c in consumers {
                send(c, ReportSum);
            }
            ctx.stop();
        }
    }
}

impl Message<Start> for BbManager {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        for p in &self.peers.get().expect("peers set").0 {
            send(p, Produce);
        }
    }
}

impl Message<BbItem> for BbManager {
    type Reply = ();

    async fn handle(&mut self, BbItem(x, p): BbItem, ctx: &mut Context<Self, ()>) {
        let step = self.book.item(x, p);
        self.apply(step, ctx);
    }
}

impl Message<ConsumerAvailable> for BbManager {
    type Reply = ();

    async fn handle(
        &mut self,
        ConsumerAvailable(c): ConsumerAvailable,
        ctx: &mut Context<Self, ()>,
    ) {
        let step = self.book.available(c);
        self.apply(step, ctx);
    }
}

impl Message<ProducerDone> for BbManager {
    type Reply = ();

    async fn handle(&mut self, _: ProducerDone, ctx: &mut Context<Self, ()>) {
        let step = self.book.producer_done();
        self.apply(step, ctx);
    }
}

impl Message<Produce> for BbProducer {
    type Reply = ();

    async fn handle(&mut self, _: Produce, ctx: &mut Context<Self, ()>) {
        if self.made < self.items {
            let x = common::bb_item(self.index, self.made, self.items, self.cost);
            self.made += 1;
            send(&self.manager, BbItem(x, self.index as usize));
        } else {
            send(&self.manager, ProducerDone);
            // Never asked again.
            ctx.stop();
        }
    }
}

impl Message<Consume> for BbConsumer {
    type Reply = ();

    async fn handle(&mut self, Consume(x): Consume, _: &mut Context<Self, ()>) {
        self.sum = self.sum.wrapping_add(common::busy(x, self.cost));
        send(&self.manager, ConsumerAvailable(self.index));
    }
}

impl Message<ReportSum> for BbConsumer {
    type Reply = ();

    async fn handle(&mut self, _: ReportSum, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

pub(super) async fn bounded_buffer(
    producers: u64,
    consumers: u64,
    items: u64,
    capacity: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let peers: BbPeers = Arc::new(OnceLock::new());
    let (consumers, capacity) = (consumers as usize, capacity as usize);
    let manager = spawn(BbManager {
        peers: peers.clone(),
        book: common::BbBook::new(producers as usize, consumers, capacity),
    });
    let ps: Vec<_> = (0..producers)
        .map(|index| {
            spawn(BbProducer {
                index,
                items,
                made: 0,
                cost,
                manager: manager.clone(),
            })
        })
        .collect();
    let cs: Vec<_> = (0..consumers)
        .map(|index| {
            spawn(BbConsumer {
                index,
                cost,
                sum: 0,
                manager: manager.clone(),
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    let _ = peers.set((ps, cs));
    send(&manager, Start);
    drop((manager, peers));
    common::wait(rx).await
}
