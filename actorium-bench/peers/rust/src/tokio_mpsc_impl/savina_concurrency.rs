//! Workloads `dictionary`, `banking`, `logistic-map`, `bounded-buffer` (the system and its set-
//! up: the parent module).

use super::*;

// ---- dictionary (Savina's concurrent dictionary) ----------------------------------------------
/// A request: the key, the value to write (`None`: read), and whom to answer.
struct DictOp(u64, Option<u64>, Addr<u64>);

async fn dictionary_actor(mut rx: Mailbox<DictOp>) {
    let mut map = common::DictMap::default();
    while let Some(DictOp(key, value, from)) = rx.recv().await {
        send(&from, map.apply(key, value));
    }
}

#[allow(clippy::too_many_arguments)]
async fn dict_worker(
    mut rx: Mailbox<u64>,
    me: Addr<u64>,
    dict: Addr<DictOp>,
    id: u64,
    msgs: u64,
    write: u64,
    done: Arc<Done>,
) {
    let (mut last, mut sum) = (0, 0);
    for i in 0..msgs {
        let (key, value) = common::dict_request(id, msgs, i, write, &mut last);
        send(&dict, DictOp(key, value, me.clone()));
        match rx.recv().await {
            Some(v) => sum += v,
            None => return,
        }
    }
    done.report(sum);
}

pub(super) async fn dictionary(workers: u64, msgs: u64, write: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(workers);
    let (dict, dict_rx) = unbounded_channel();
    tokio::spawn(dictionary_actor(dict_rx));
    for id in 0..workers {
        let (me, mailbox) = unbounded_channel();
        tokio::spawn(dict_worker(
            mailbox,
            me,
            dict.clone(),
            id,
            msgs,
            write,
            done.clone(),
        ));
    }
    drop((done, dict));
    common::wait(rx).await
}

// ---- banking (Savina's bank transaction) -----------------------------------------------------
enum AccountMsg {
    Transfer { to: u64, amount: u64 },
    Credit { from: u64, amount: u64 },
    Credited,
    Report,
    Stop,
}
enum TellerMsg {
    Completed,
    Balance(u64, u64),
}

async fn account(
    mut rx: Mailbox<AccountMsg>,
    index: u64,
    accounts: Arc<[Addr<AccountMsg>]>,
    teller: Addr<TellerMsg>,
) {
    let mut balance = common::BANK_INITIAL;
    while let Some(m) = rx.recv().await {
        match m {
            AccountMsg::Transfer { to, amount } => {
                balance -= amount;
                send(
                    &accounts[to as usize],
                    AccountMsg::Credit {
                        from: index,
                        amount,
                    },
                );
            }
            AccountMsg::Credit { from, amount } => {
                balance += amount;
                send(&accounts[from as usize], AccountMsg::Credited);
            }
            AccountMsg::Credited => send(&teller, TellerMsg::Completed),
            AccountMsg::Report => send(&teller, TellerMsg::Balance(index, balance)),
            AccountMsg::Stop => return,
        }
    }
}

async fn teller(
    mut rx: Mailbox<TellerMsg>,
    accounts: Arc<[Addr<AccountMsg>]>,
    transactions: u64,
    done: Arc<Done>,
) {
    let n = accounts.len() as u64;
    for t in 0..transactions {
        let (from, to, amount) = common::bank_transfer(t, n);
        send(
            &accounts[from as usize],
            AccountMsg::Transfer { to, amount },
        );
    }
    let mut completed = 0;
    while completed < transactions {
        match rx.recv().await {
            Some(TellerMsg::Completed) => completed += 1,
            _ => return,
        }
    }
    for a in accounts.iter() {
        send(a, AccountMsg::Report);
    }
    let mut balances = Vec::with_capacity(n as usize);
    while (balances.len() as u64) < n {
        match rx.recv().await {
            Some(TellerMsg::Balance(i, b)) => balances.push((i, b)),
            _ => return,
        }
    }
    done.report(common::bank_checksum(balances.into_iter()));
}

pub(super) async fn banking(accounts: u64, transactions: u64) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (teller_addr, teller_rx) = unbounded_channel();
    let (all, mailboxes): (Vec<_>, Vec<_>) = (0..accounts).map(|_| unbounded_channel()).unzip();
    let all: Arc<[Addr<AccountMsg>]> = Arc::from(all.as_slice());
    for (index, mailbox) in (0..accounts).zip(mailboxes) {
        tokio::spawn(account(mailbox, index, all.clone(), teller_addr.clone()));
    }
    tokio::spawn(teller(teller_rx, all.clone(), transactions, done));
    drop(teller_addr);
    let total = common::wait(rx).await?;
    // Each account holds every address: end them now.
    for a in all.iter() {
        send(a, AccountMsg::Stop);
    }
    Ok(total)
}

// ---- logistic-map (Savina's logistic map series) ---------------------------------------------
enum SeriesMsg {
    NextTerm,
    Computed(u64),
}

async fn rate_computer(mut rx: Mailbox<(u64, Addr<SeriesMsg>)>, index: u64) {
    while let Some((x, from)) = rx.recv().await {
        send(&from, SeriesMsg::Computed(common::logmap_next(index, x)));
    }
}

async fn series_actor(
    mut rx: Mailbox<SeriesMsg>,
    me: Addr<SeriesMsg>,
    index: u64,
    computer: Addr<(u64, Addr<SeriesMsg>)>,
    master: Addr<u64>,
) {
    let mut term = common::logmap_start(index);
    while let Some(m) = rx.recv().await {
        match m {
            SeriesMsg::NextTerm => send(&computer, (term, me.clone())),
            SeriesMsg::Computed(x) => {
                term = x;
                send(&master, x);
            }
        }
    }
}

pub(super) async fn logistic_map(series: u64, terms: u64) -> Result<u64, String> {
    let (master, mut master_rx) = unbounded_channel::<u64>();
    let mut all = Vec::with_capacity(series as usize);
    for index in 0..series {
        let (computer, computer_rx) = unbounded_channel();
        tokio::spawn(rate_computer(computer_rx, index));
        let (me, rx) = unbounded_channel();
        tokio::spawn(series_actor(
            rx,
            me.clone(),
            index,
            computer,
            master.clone(),
        ));
        all.push(me);
    }
    drop(master);
    // The master: a task of its own, as the other implementations' master actor.
    let driver = tokio::spawn(async move {
        if terms == 0 {
            return (0..series).map(common::logmap_start).sum();
        }
        let mut sum = 0;
        for step in 0..terms {
            for s in &all {
                send(s, SeriesMsg::NextTerm);
            }
            for _ in 0..series {
                let x = master_rx.recv().await.expect("a series ended");
                if step + 1 == terms {
                    sum += x;
                }
            }
        }
        sum
    });
    driver.await.map_err(|e| format!("tokio: {e}"))
}

// ---- bounded-buffer (Savina's producer–consumer with a bounded buffer) ---------------------
enum ManagerMsg {
    Start,
    /// `Item(item, producer)`.
    Item(u64, usize),
    ProducerDone,
    /// A consumer is available: `Available(consumer)`.
    Available(usize),
}
struct Produce;
enum ConsumerMsg {
    Consume(u64),
    ReportSum,
}

/// The manager. It returns once it has asked the consumers for their sums; every producer has
/// ended by then, and no consumer sends to it again.
async fn bb_manager(
    mut rx: Mailbox<ManagerMsg>,
    producers: Vec<Addr<Produce>>,
    consumers: Vec<Addr<ConsumerMsg>>,
    capacity: usize,
) {
    let mut book = common::BbBook::new(producers.len(), consumers.len(), capacity);
    while let Some(m) = rx.recv().await {
        let step = match m {
            ManagerMsg::Start => {
                for p in &producers {
                    send(p, Produce);
                }
                continue;
            }
            ManagerMsg::Item(x, p) => book.item(x, p),
            ManagerMsg::Available(c) => book.available(c),
            ManagerMsg::ProducerDone => book.producer_done(),
        };
        if let Some((c, x)) = step.consume {
            send(&consumers[c], ConsumerMsg::Consume(x));
        }
        if let Some(p) = step.produce {
            send(&producers[p], Produce);
        }
        if step.finished {
            // Every item consumed: collect the sums.
            for c in &consumers {
                send(c, ConsumerMsg::ReportSum);
            }
            return;
        }
    }
}

async fn bb_producer(
    mut rx: Mailbox<Produce>,
    index: u64,
    items: u64,
    cost: u64,
    manager: Addr<ManagerMsg>,
) {
    let mut made = 0;
    while let Some(Produce) = rx.recv().await {
        if made == items {
            send(&manager, ManagerMsg::ProducerDone);
            // Never asked again.
            return;
        }
        let x = common::bb_item(index, made, items, cost);
        made += 1;
        send(&manager, ManagerMsg::Item(x, index as usize));
    }
}

async fn bb_consumer(
    mut rx: Mailbox<ConsumerMsg>,
    index: usize,
    cost: u64,
    manager: Addr<ManagerMsg>,
    done: Arc<Done>,
) {
    let mut sum = 0u64;
    while let Some(m) = rx.recv().await {
        match m {
            ConsumerMsg::Consume(x) => {
                sum = sum.wrapping_add(common::busy(x, cost));
                send(&manager, ManagerMsg::Available(index));
            }
            ConsumerMsg::ReportSum => {
                done.report(sum);
                return;
            }
        }
    }
}

pub(super) async fn bounded_buffer(
    producers: u64,
    consumers: u64,
    items: u64,
    buffer: u64,
    cost: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(consumers);
    let (manager, manager_rx) = unbounded_channel();
    let producer_list = (0..producers)
        .map(|index| {
            let manager = manager.clone();
            spawn(move |rx| bb_producer(rx, index, items, cost, manager))
        })
        .collect();
    let consumer_list = (0..consumers as usize)
        .map(|index| {
            let (manager, done) = (manager.clone(), done.clone());
            spawn(move |rx| bb_consumer(rx, index, cost, manager, done))
        })
        .collect();
    drop(done);
    tokio::spawn(bb_manager(
        manager_rx,
        producer_list,
        consumer_list,
        buffer as usize,
    ));
    send(&manager, ManagerMsg::Start);
    drop(manager);
    common::wait(rx).await
}
