//! Workloads `dictionary`, `banking`, `logistic-map`, `bounded-buffer` (the system and its set-
//! up: the parent module).

use super::*;

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary {
    _me: Addr<Dictionary>,
    map: common::DictMap,
}
struct DictWorker {
    me: Addr<DictWorker>,
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
actor!(Dictionary, DictWorker);
message!(DictOp, DictReply);
stoppable!(Dictionary);

impl Handler<DictOp> for Dictionary {
    type Result = ();

    fn handle(&mut self, DictOp(key, value, from): DictOp, _: &mut Context<Self>) {
        let reply = self.map.apply(key, value);
        from.do_send(DictReply(reply));
    }
}

impl DictWorker {
    fn request(&mut self) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        self.dict.do_send(DictOp(key, value, self.me.clone()));
    }
}

impl Handler<Start> for DictWorker {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        self.request();
    }
}

impl Handler<DictReply> for DictWorker {
    type Result = ();

    fn handle(&mut self, DictReply(v): DictReply, ctx: &mut Context<Self>) {
        self.sum += v;
        if self.sent < self.msgs {
            self.request();
        } else {
            self.done.report(self.sum);
            ctx.stop();
        }
    }
}

pub(super) async fn dictionary(
    p: &Placer,
    workers: u64,
    msgs: u64,
    write: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = p.start(|_me| Dictionary {
        _me,
        map: common::DictMap::default(),
    });
    let all: Vec<_> = (0..workers)
        .map(|id| {
            let (dict, done) = (dict.clone(), done.clone());
            p.start(move |me| DictWorker {
                me,
                dict,
                id,
                msgs,
                write,
                sent: 0,
                last: 0,
                sum: 0,
                done,
            })
        })
        .collect();
    drop(done);
    for w in &all {
        w.do_send(Start);
    }
    let total = common::wait(rx).await?;
    dict.do_send(Stop);
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<Addr<Account>>>>;
struct Teller {
    _me: Addr<Teller>,
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account {
    _me: Addr<Account>,
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: Addr<Teller>,
}
struct Transfer(u64, u64);
struct Credit(u64, u64);
struct Credited;
struct Completed;
struct Report;
struct Balance(u64, u64);
actor!(Teller, Account);
message!(Transfer, Credit, Credited, Completed, Report, Balance);
stoppable!(Teller, Account);

impl Teller {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            a.do_send(Report);
        }
    }
}

impl Handler<Start> for Teller {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        let accounts = self.accounts.get().expect("accounts set");
        for t in 0..self.transactions {
            let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
            accounts[from as usize].do_send(Transfer(to, amount));
        }
        if self.transactions == 0 {
            self.ask_balances();
        }
    }
}

impl Handler<Completed> for Teller {
    type Result = ();

    fn handle(&mut self, _: Completed, _: &mut Context<Self>) {
        self.completed += 1;
        if self.completed == self.transactions {
            self.ask_balances();
        }
    }
}

impl Handler<Balance> for Teller {
    type Result = ();

    fn handle(&mut self, Balance(i, b): Balance, _: &mut Context<Self>) {
        self.balances.push((i, b));
        if self.balances.len() == self.accounts.get().expect("accounts set").len() {
            self.done
                .report(common::bank_checksum(self.balances.drain(..)));
        }
    }
}

impl Handler<Transfer> for Account {
    type Result = ();

    fn handle(&mut self, Transfer(to, amount): Transfer, _: &mut Context<Self>) {
        self.balance -= amount;
        self.accounts.get().expect("accounts set")[to as usize].do_send(Credit(self.index, amount));
    }
}

impl Handler<Credit> for Account {
    type Result = ();

    fn handle(&mut self, Credit(from, amount): Credit, _: &mut Context<Self>) {
        self.balance += amount;
        self.accounts.get().expect("accounts set")[from as usize].do_send(Credited);
    }
}

impl Handler<Credited> for Account {
    type Result = ();

    fn handle(&mut self, _: Credited, _: &mut Context<Self>) {
        self.teller.do_send(Completed);
    }
}

impl Handler<Report> for Account {
    type Result = ();

    fn handle(&mut self, _: Report, _: &mut Context<Self>) {
        self.teller.do_send(Balance(self.index, self.balance));
    }
}

pub(super) async fn banking(p: &Placer, accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = {
        let all = all.clone();
        p.start(move |_me| Teller {
            _me,
            accounts: all,
            transactions,
            completed: 0,
            balances: Vec::new(),
            done,
        })
    };
    let list: Vec<_> = (0..accounts)
        .map(|index| {
            let (all, teller) = (all.clone(), teller.clone());
            p.start(move |_me| Account {
                _me,
                index,
                balance: common::BANK_INITIAL,
                accounts: all,
                teller,
            })
        })
        .collect();
    let _ = all.set(list.clone());
    teller.do_send(Start);
    let total = common::wait(rx).await?;
    for a in &list {
        a.do_send(Stop);
    }
    teller.do_send(Stop);
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster {
    _me: Addr<LogMaster>,
    series: Arc<OnceLock<Vec<Addr<Series>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series {
    me: Addr<Series>,
    term: u64,
    computer: Addr<RateComputer>,
    master: Addr<LogMaster>,
}
struct RateComputer {
    _me: Addr<RateComputer>,
    index: u64,
}
struct NextTerm;
struct Compute(u64, Addr<Series>);
struct Computed(u64);
struct TermDone(u64);
actor!(LogMaster, Series, RateComputer);
message!(NextTerm, Compute, Computed, TermDone);
stoppable!(LogMaster, Series, RateComputer);

impl LogMaster {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            s.do_send(NextTerm);
        }
    }
}

impl Handler<Start> for LogMaster {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        match self.rounds.start() {
            Some(sum) => self.done.report(sum),
            None => self.round(),
        }
    }
}

impl Handler<TermDone> for LogMaster {
    type Result = ();

    fn handle(&mut self, TermDone(x): TermDone, _: &mut Context<Self>) {
        match self.rounds.answer(x) {
            common::Round::Next => self.round(),
            common::Round::Done(sum) => self.done.report(sum),
            common::Round::Wait => {}
        }
    }
}

impl Handler<NextTerm> for Series {
    type Result = ();

    fn handle(&mut self, _: NextTerm, _: &mut Context<Self>) {
        self.computer.do_send(Compute(self.term, self.me.clone()));
    }
}

impl Handler<Computed> for Series {
    type Result = ();

    fn handle(&mut self, Computed(x): Computed, _: &mut Context<Self>) {
        self.term = x;
        self.master.do_send(TermDone(x));
    }
}

impl Handler<Compute> for RateComputer {
    type Result = ();

    fn handle(&mut self, Compute(x, from): Compute, _: &mut Context<Self>) {
        from.do_send(Computed(common::logmap_next(self.index, x)));
    }
}

pub(super) async fn logistic_map(p: &Placer, series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = {
        let list = list.clone();
        p.start(move |_me| LogMaster {
            _me,
            series: list,
            rounds: common::TermRounds::new(series, terms),
            done,
        })
    };
    let computers: Vec<_> = (0..series)
        .map(|index| p.start(move |_me| RateComputer { _me, index }))
        .collect();
    let all: Vec<_> = (0..series)
        .map(|index| {
            let (computer, master) = (computers[index as usize].clone(), master.clone());
            p.start(move |me| Series {
                me,
                term: common::logmap_start(index),
                computer,
                master,
            })
        })
        .collect();
    let _ = list.set(all.clone());
    master.do_send(Start);
    let total = common::wait(rx).await?;
    for a in &all {
        a.do_send(Stop);
    }
    for c in &computers {
        c.do_send(Stop);
    }
    master.do_send(Stop);
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
struct BbManager {
    _me: Addr<BbManager>,
    producers: Vec<Addr<BbProducer>>,
    consumers: Vec<Addr<BbConsumer>>,
    book: common::BbBook,
}
struct BbProducer {
    _me: Addr<BbProducer>,
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: Addr<BbManager>,
}
struct BbConsumer {
    _me: Addr<BbConsumer>,
    index: usize,
    cost: u64,
    sum: u64,
    manager: Addr<BbManager>,
    done: Arc<Done>,
}
/// The manager's producers and consumers (sent before `Start`).
struct BbPeers(Vec<Addr<BbProducer>>, Vec<Addr<BbConsumer>>);
struct Produce;
/// `BbItem(item, producer)`.
struct BbItem(u64, usize);
struct ProducerDone;
struct Consume(u64);
struct ConsumerAvailable(usize);
struct ReportSum;
actor!(BbManager, BbProducer, BbConsumer);
message!(
    BbPeers,
    Produce,
    BbItem,
    ProducerDone,
    Consume,
    ConsumerAvailable,
    ReportSum
);

impl BbManager {
    /// Sends what a step of the bookkeeping says; when every item is consumed, asks the
    /// consumers for their sums and ends.
    fn apply(&self, step: common::BbSend, ctx: &mut Context<Self>) {
        if let Some((c, x)) = step.consume {
            self.consumers[c].do_send(Consume(x));
        }
        if let Some(p) = step.produce {
            self.producers[p].do_send(Produce);
        }
        if step.finished {
            for c in &self.consumers {
                c.do_send(ReportSum);
            }
            ctx.stop();
        }
    }
}

impl Handler<BbPeers> for BbManager {
    type Result = ();

    fn handle(&mut self, BbPeers(producers, consumers): BbPeers, _: &mut Context<Self>) {
        self.producers = producers;
        self.consumers = consumers;
    }
}

impl Handler<Start> for BbManager {
    type Result = ();

    fn handle(&mut self, _: Start, _: &mut Context<Self>) {
        for p in &self.producers {
            p.do_send(Produce);
        }
    }
}

impl Handler<BbItem> for BbManager {
    type Result = ();

    fn handle(&mut self, BbItem(x, p): BbItem, ctx: &mut Context<Self>) {
        let step = self.book.item(x, p);
        self.apply(step, ctx);
    }
}

impl Handler<ConsumerAvailable> for BbManager {
    type Result = ();

    fn handle(&mut self, ConsumerAvailable(c): ConsumerAvailable, ctx: &mut Context<Self>) {
        let step = self.book.available(c);
        self.apply(step, ctx);
    }
}

impl Handler<ProducerDone> for BbManager {
    type Result = ();

    fn handle(&mut self, _: ProducerDone, ctx: &mut Context<Self>) {
        let step = self.book.producer_done();
        self.apply(step, ctx);
    }
}

impl Handler<Produce> for BbProducer {
    type Result = ();

    fn handle(&mut self, _: Produce, ctx: &mut Context<Self>) {
        if self.made == self.items {
            self.manager.do_send(ProducerDone);
            // Never asked again.
            ctx.stop();
            return;
        }
        let x = common::bb_item(self.index, self.made, self.items, self.cost);
        self.made += 1;
        self.manager.do_send(BbItem(x, self.index as usize));
    }
}

impl Handler<Consume> for BbConsumer {
    type Result = ();

    fn handle(&mut self, Consume(x): Consume, _: &mut Context<Self>) {
        self.sum = self.sum.wrapping_add(common::busy(x, self.cost));
        self.manager.do_send(ConsumerAvailable(self.index));
    }
}

impl Handler<ReportSum> for BbConsumer {
    type Result = ();

    fn handle(&mut self, _: ReportSum, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

pub(super) async fn bounded_buffer(
    p: &Placer,
    producers: u64,
    consumers: u64,
    items: u64,
    buffer: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let capacity = buffer as usize;
    let manager = p.start(move |_me| BbManager {
        _me,
        producers: Vec::new(),
        consumers: Vec::new(),
        book: common::BbBook::new(producers as usize, consumers as usize, capacity),
    });
    let producer_list = (0..producers)
        .map(|index| {
            let manager = manager.clone();
            p.start(move |_me| BbProducer {
                _me,
                index,
                items,
                made: 0,
                cost,
                manager,
            })
        })
        .collect();
    let consumer_list = (0..consumers as usize)
        .map(|index| {
            let (manager, done) = (manager.clone(), done.clone());
            p.start(move |_me| BbConsumer {
                _me,
                index,
                cost,
                sum: 0,
                manager,
                done,
            })
        })
        .collect();
    drop(done);
    manager.do_send(BbPeers(producer_list, consumer_list));
    manager.do_send(Start);
    drop(manager);
    common::wait(rx).await
}
