//! Workloads `dictionary`, `banking`, `logistic-map`, `bounded-buffer` (the system and its set-
//! up: the parent module).

use super::*;

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
struct Dictionary;
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, ActorRef<WorkerMsg>);

impl Actor for Dictionary {
    type Msg = DictOp;
    type State = common::DictMap;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<DictOp>, _: ()) -> Started<Self::State> {
        Ok(common::DictMap::default())
    }

    async fn handle(&self, _: ActorRef<DictOp>, op: DictOp, map: &mut Self::State) -> Handled {
        let DictOp(key, value, from) = op;
        send(&from, WorkerMsg::Reply(map.apply(key, value)));
        Ok(())
    }
}

struct DictWorker;
enum WorkerMsg {
    Start,
    Reply(u64),
}
struct WorkerState {
    dict: ActorRef<DictOp>,
    id: u64,
    msgs: u64,
    write: u64,
    sent: u64,
    last: u64,
    sum: u64,
    done: Arc<Done>,
}

impl WorkerState {
    fn request(&mut self, me: &ActorRef<WorkerMsg>) {
        let (key, value) =
            common::dict_request(self.id, self.msgs, self.sent, self.write, &mut self.last);
        self.sent += 1;
        send(&self.dict, DictOp(key, value, me.clone()));
    }
}

impl Actor for DictWorker {
    type Msg = WorkerMsg;
    type State = WorkerState;
    type Arguments = WorkerState;

    async fn pre_start(&self, _: ActorRef<WorkerMsg>, args: WorkerState) -> Started<WorkerState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<WorkerMsg>, m: WorkerMsg, st: &mut WorkerState) -> Handled {
        match m {
            WorkerMsg::Start => st.request(&me),
            WorkerMsg::Reply(v) => {
                st.sum += v;
                if st.sent < st.msgs {
                    st.request(&me);
                } else {
                    st.done.report(st.sum);
                    me.stop(None);
                }
            }
        }
        Ok(())
    }
}

pub(super) async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let dict = spawn(Dictionary, ()).await;
    let mut all = Vec::with_capacity(workers as usize);
    for id in 0..workers {
        let state = WorkerState {
            dict: dict.clone(),
            id,
            msgs,
            write,
            sent: 0,
            last: 0,
            sum: 0,
            done: done.clone(),
        };
        all.push(spawn(DictWorker, state).await);
    }
    drop(done);
    for w in &all {
        send(w, WorkerMsg::Start);
    }
    let total = common::wait(rx).await?;
    dict.stop(None);
    Ok(total)
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
type Accounts = Arc<OnceLock<Vec<ActorRef<AccountMsg>>>>;
struct Teller;
enum TellerMsg {
    Start,
    Completed,
    Balance(u64, u64),
}
struct TellerState {
    accounts: Accounts,
    transactions: u64,
    completed: u64,
    balances: Vec<(u64, u64)>,
    done: Arc<Done>,
}
struct Account;
enum AccountMsg {
    Transfer(u64, u64),
    Credit(u64, u64),
    Credited,
    Report,
}
struct AccountState {
    index: u64,
    balance: u64,
    accounts: Accounts,
    teller: ActorRef<TellerMsg>,
}

impl TellerState {
    fn ask_balances(&self) {
        for a in self.accounts.get().expect("accounts set") {
            send(a, AccountMsg::Report);
        }
    }
}

impl Actor for Teller {
    type Msg = TellerMsg;
    type State = TellerState;
    type Arguments = TellerState;

    async fn pre_start(&self, _: ActorRef<TellerMsg>, args: TellerState) -> Started<TellerState> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<TellerMsg>, m: TellerMsg, st: &mut TellerState) -> Handled {
        match m {
            TellerMsg::Start => {
                let accounts = st.accounts.get().expect("accounts set");
                for t in 0..st.transactions {
                    let (from, to, amount) = common::bank_transfer(t, accounts.len() as u64);
                    send(&accounts[from as usize], AccountMsg::Transfer(to, amount));
                }
                if st.transactions == 0 {
                    st.ask_balances();
                }
            }
            TellerMsg::Completed => {
                st.completed += 1;
                if st.completed == st.transactions {
                    st.ask_balances();
                }
            }
            TellerMsg::Balance(i, b) => {
                st.balances.push((i, b));
                if st.balances.len() == st.accounts.get().expect("accounts set").len() {
                    st.done.report(common::bank_checksum(st.balances.drain(..)));
                }
            }
        }
        Ok(())
    }
}

impl Actor for Account {
    type Msg = AccountMsg;
    type State = AccountState;
    type Arguments = AccountState;

    async fn pre_start(
        &self,
        _: ActorRef<AccountMsg>,
        args: AccountState,
    ) -> Started<AccountState> {
        Ok(args)
    }

    async fn handle(
        &self,
        _: ActorRef<AccountMsg>,
        m: AccountMsg,
        st: &mut AccountState,
    ) -> Handled {
        let accounts = st.accounts.get().expect("accounts set");
        match m {
            AccountMsg::Transfer(to, amount) => {
                st.balance -= amount;
                send(&accounts[to as usize], AccountMsg::Credit(st.index, amount));
            }
            AccountMsg::Credit(from, amount) => {
                st.balance += amount;
                send(&accounts[from as usize], AccountMsg::Credited);
            }
            AccountMsg::Credited => send(&st.teller, TellerMsg::Completed),
            AccountMsg::Report => send(&st.teller, TellerMsg::Balance(st.index, st.balance)),
        }
        Ok(())
    }
}

pub(super) async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let all: Accounts = Arc::new(OnceLock::new());
    let teller = spawn(
        Teller,
        TellerState {
            accounts: all.clone(),
            transactions,
            completed: 0,
            balances: Vec::new(),
            done,
        },
    )
    .await;
    let mut list = Vec::with_capacity(accounts as usize);
    for index in 0..accounts {
        let state = AccountState {
            index,
            balance: common::BANK_INITIAL,
            accounts: all.clone(),
            teller: teller.clone(),
        };
        list.push(spawn(Account, state).await);
    }
    let _ = all.set(list.clone());
    send(&teller, TellerMsg::Start);
    let total = common::wait(rx).await?;
    for a in &list {
        a.stop(None);
    }
    teller.stop(None);
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
struct LogMaster;
enum MasterMsg {
    Start,
    TermDone(u64),
}
struct MasterState {
    series: Arc<OnceLock<Vec<ActorRef<SeriesMsg>>>>,
    rounds: common::TermRounds,
    done: Arc<Done>,
}
struct Series;
enum SeriesMsg {
    NextTerm,
    Computed(u64),
}
struct SeriesState {
    term: u64,
    computer: ActorRef<(u64, ActorRef<SeriesMsg>)>,
    master: ActorRef<MasterMsg>,
}
struct RateComputer;

impl MasterState {
    fn round(&self) {
        for s in self.series.get().expect("series set") {
            send(s, SeriesMsg::NextTerm);
        }
    }
}

impl Actor for LogMaster {
    type Msg = MasterMsg;
    type State = MasterState;
    type Arguments = MasterState;

    async fn pre_start(&self, _: ActorRef<MasterMsg>, args: MasterState) -> Started<MasterState> {
        Ok(args)
    }

    async fn handle(&self, _: ActorRef<MasterMsg>, m: MasterMsg, st: &mut MasterState) -> Handled {
        match m {
            MasterMsg::Start => match st.rounds.start() {
                Some(sum) => st.done.report(sum),
                None => st.round(),
            },
            MasterMsg::TermDone(x) => match st.rounds.answer(x) {
                common::Round::Next => st.round(),
                common::Round::Done(sum) => st.done.report(sum),
                common::Round::Wait => {}
            },
        }
        Ok(())
    }
}

impl Actor for Series {
    type Msg = SeriesMsg;
    type State = SeriesState;
    type Arguments = SeriesState;

    async fn pre_start(&self, _: ActorRef<SeriesMsg>, args: SeriesState) -> Started<SeriesState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<SeriesMsg>, m: SeriesMsg, st: &mut SeriesState) -> Handled {
        match m {
            SeriesMsg::NextTerm => send(&st.computer, (st.term, me)),
            SeriesMsg::Computed(x) => {
                st.term = x;
                send(&st.master, MasterMsg::TermDone(x));
            }
        }
        Ok(())
    }
}

impl Actor for RateComputer {
    type Msg = (u64, ActorRef<SeriesMsg>);
    type State = u64;
    type Arguments = u64;

    async fn pre_start(&self, _: ActorRef<Self::Msg>, index: u64) -> Started<u64> {
        Ok(index)
    }

    async fn handle(&self, _: ActorRef<Self::Msg>, m: Self::Msg, index: &mut u64) -> Handled {
        let (x, from) = m;
        send(&from, SeriesMsg::Computed(common::logmap_next(*index, x)));
        Ok(())
    }
}

pub(super) async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let list = Arc::new(OnceLock::new());
    let master = spawn(
        LogMaster,
        MasterState {
            series: list.clone(),
            rounds: common::TermRounds::new(series, terms),
            done,
        },
    )
    .await;
    let mut computers = Vec::with_capacity(series as usize);
    let mut all = Vec::with_capacity(series as usize);
    for index in 0..series {
        let computer = spawn(RateComputer, index).await;
        let state = SeriesState {
            term: common::logmap_start(index),
            computer: computer.clone(),
            master: master.clone(),
        };
        all.push(spawn(Series, state).await);
        computers.push(computer);
    }
    let _ = list.set(all.clone());
    send(&master, MasterMsg::Start);
    let total = common::wait(rx).await?;
    for a in &all {
        a.stop(None);
    }
    for c in &computers {
        c.stop(None);
    }
    master.stop(None);
    Ok(total)
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
/// The manager's producers and consumers, set once all are spawned.
type BbPeers = Arc<OnceLock<(Vec<ActorRef<Produce>>, Vec<ActorRef<ConsumerMsg>>)>>;
struct BbManager;
enum BbManagerMsg {
    Start,
    /// An item and the index of its producer.
    Item(u64, usize),
    ProducerDone,
    /// Consumer `c` is available.
    Available(usize),
}
struct BbManagerState {
    peers: BbPeers,
    book: common::BbBook,
}
struct BbProducer;
struct Produce;
struct BbProducerState {
    index: u64,
    items: u64,
    made: u64,
    cost: u64,
    manager: ActorRef<BbManagerMsg>,
}
struct BbConsumer;
enum ConsumerMsg {
    Consume(u64),
    ReportSum,
}
struct BbConsumerState {
    index: usize,
    cost: u64,
    sum: u64,
    manager: ActorRef<BbManagerMsg>,
    done: Arc<Done>,
}

impl Actor for BbManager {
    type Msg = BbManagerMsg;
    type State = BbManagerState;
    type Arguments = BbManagerState;

    async fn pre_start(&self, _: ActorRef<Self::Msg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<BbManagerMsg>,
        m: BbManagerMsg,
        st: &mut BbManagerState,
    ) -> Handled {
        let (producers, consumers) = st.peers.get().expect("peers set");
        let step = match m {
            BbManagerMsg::Start => {
                for p in producers {
                    send(p, Produce);
                }
                return Ok(());
            }
            BbManagerMsg::Item(x, p) => st.book.item(x, p),
            BbManagerMsg::Available(c) => st.book.available(c),
            BbManagerMsg::ProducerDone => st.book.producer_done(),
        };
        if let Some((c, x)) = step.consume {
            send(&consumers[c], ConsumerMsg::Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            // Every item consumed: collect the sums.
            for c in consumers {
                send(c, ConsumerMsg::ReportSum);
            }
            me.stop(None);
        }
        Ok(())
    }
}

impl Actor for BbProducer {
    type Msg = Produce;
    type State = BbProducerState;
    type Arguments = BbProducerState;

    async fn pre_start(&self, _: ActorRef<Produce>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<Produce>, _: Produce, st: &mut BbProducerState) -> Handled {
        if st.made < st.items {
            let x = common::bb_item(st.index, st.made, st.items, st.cost);
            st.made += 1;
            send(&st.manager, BbManagerMsg::Item(x, st.index as usize));
        } else {
            send(&st.manager, BbManagerMsg::ProducerDone);
            // Never asked again.
            me.stop(None);
        }
        Ok(())
    }
}

impl Actor for BbConsumer {
    type Msg = ConsumerMsg;
    type State = BbConsumerState;
    type Arguments = BbConsumerState;

    async fn pre_start(&self, _: ActorRef<ConsumerMsg>, args: Self::State) -> Started<Self::State> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<ConsumerMsg>,
        m: ConsumerMsg,
        st: &mut BbConsumerState,
    ) -> Handled {
        match m {
            ConsumerMsg::Consume(x) => {
                st.sum = st.sum.wrapping_add(common::busy(x, st.cost));
                send(&st.manager, BbManagerMsg::Available(st.index));
            }
            ConsumerMsg::ReportSum => {
                st.done.report(st.sum);
                me.stop(None);
            }
        }
        Ok(())
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
    let manager = spawn(
        BbManager,
        BbManagerState {
            peers: peers.clone(),
            book: common::BbBook::new(producers as usize, consumers, capacity),
        },
    )
    .await;
    let mut ps = Vec::with_capacity(producers as usize);
    for index in 0..producers {
        let state = BbProducerState {
            index,
            items,
            made: 0,
            cost,
            manager: manager.clone(),
        };
        ps.push(spawn(BbProducer, state).await);
    }
    let mut cs = Vec::with_capacity(consumers);
    for index in 0..consumers {
        let state = BbConsumerState {
            index,
            cost,
            sum: 0,
            manager: manager.clone(),
            done: done.clone(),
        };
        cs.push(spawn(BbConsumer, state).await);
    }
    drop(done);
    let _ = peers.set((ps, cs));
    send(&manager, BbManagerMsg::Start);
    drop((manager, peers));
    common::wait(rx).await
}
