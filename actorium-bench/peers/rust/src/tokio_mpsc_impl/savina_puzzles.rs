//! Workloads `sleeping-barber`, `cigarette-smokers` (the system and its set-up: the parent
//! module).

use super::*;

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
enum FactoryMsg {
    Start,
    /// A customer told `Full`: `Returned(customer, token)`.
    Returned(Addr<CustomerMsg>, u64),
    /// `Served(id, v)`.
    Served(u64, u64),
}
pub(super) enum RoomMsg {
    /// `Enter(customer, token)`.
    Enter(Addr<CustomerMsg>, u64),
    Next,
    /// Every customer is served: end once the barber is asleep.
    Close,
}
/// `Cut(customer, token)`.
pub(super) struct Cut(Addr<CustomerMsg>, u64);
pub(super) enum CustomerMsg {
    Full,
    Done(u64),
}

async fn factory(
    me: Addr<FactoryMsg>,
    mut rx: Mailbox<FactoryMsg>,
    room: Addr<RoomMsg>,
    customers: u64,
    arrival: u64,
    done: Arc<Done>,
) {
    let (mut served, mut sum) = (0, 0u64);
    while let Some(m) = rx.recv().await {
        let all_served = match m {
            FactoryMsg::Start => {
                for id in 0..customers {
                    let token = common::busy(id, arrival);
                    let (c, mailbox) = unbounded_channel();
                    tokio::spawn(customer(c.clone(), mailbox, id, token, me.clone()));
                    send(&room, RoomMsg::Enter(c, token));
                }
                customers == 0
            }
            FactoryMsg::Returned(c, token) => {
                send(&room, RoomMsg::Enter(c, token));
                false
            }
            FactoryMsg::Served(_id, v) => {
                sum = sum.wrapping_add(v);
                served += 1;
                served == customers
            }
        };
        if all_served {
            // Close the room (which ends the barber), and report.
            send(&room, RoomMsg::Close);
            done.report(sum);
            return;
        }
    }
}

/// The waiting room. The room and the barber hold each other's address: closed, the room ends
/// once the barber is asleep (his last `Next` handled, so he sends it nothing more), and its
/// end, dropping the barber's only address, ends him.
async fn waiting_room(mut rx: Mailbox<RoomMsg>, barber: Addr<Cut>, chairs: usize) {
    // Seated customers with their tokens, longest-seated first.
    let mut seated: VecDeque<(Addr<CustomerMsg>, u64)> = VecDeque::with_capacity(chairs);
    let (mut asleep, mut closing) = (true, false);
    while let Some(m) = rx.recv().await {
        match m {
            RoomMsg::Enter(c, token) => {
                if seated.len() == chairs {
                    send(&c, CustomerMsg::Full);
                } else if asleep {
                    asleep = false;
                    send(&barber, Cut(c, token));
                } else {
                    seated.push_back((c, token));
                }
            }
            RoomMsg::Next => match seated.pop_front() {
                Some((c, token)) => send(&barber, Cut(c, token)),
                None => asleep = true,
            },
            RoomMsg::Close => closing = true,
        }
        if closing && asleep {
            return;
        }
    }
}

pub(super) async fn barber(mut rx: Mailbox<Cut>, room: Addr<RoomMsg>, cut: u64) {
    while let Some(Cut(c, token)) = rx.recv().await {
        send(&c, CustomerMsg::Done(common::busy(token, cut)));
        send(&room, RoomMsg::Next);
    }
}

async fn customer(
    me: Addr<CustomerMsg>,
    mut rx: Mailbox<CustomerMsg>,
    id: u64,
    token: u64,
    factory: Addr<FactoryMsg>,
) {
    while let Some(m) = rx.recv().await {
        match m {
            CustomerMsg::Full => send(&factory, FactoryMsg::Returned(me.clone(), token)),
            CustomerMsg::Done(v) => {
                send(&factory, FactoryMsg::Served(id, v));
                return;
            }
        }
    }
}

pub(super) async fn sleeping_barber(
    customers: u64,
    room: u64,
    arrival: u64,
    cut: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let (to_room, room_rx) = unbounded_channel();
    let (to_barber, barber_rx) = unbounded_channel();
    let barber_task = tokio::spawn(barber(barber_rx, to_room.clone(), cut));
    let room_task = tokio::spawn(waiting_room(room_rx, to_barber, room as usize));
    let (to_factory, factory_rx) = unbounded_channel();
    tokio::spawn(factory(
        to_factory.clone(),
        factory_rx,
        to_room,
        customers,
        arrival,
        done,
    ));
    send(&to_factory, FactoryMsg::Start);
    drop(to_factory);
    let total = common::wait(rx).await?;
    // The barber's last `Next` may still be on its way when the factory reports: wait for the
    // room and the barber to end (the room once closed and the barber asleep, the barber with
    // the room), so that dropping the runtime cancels no task that is about to send.
    for task in [room_task, barber_task] {
        task.await.map_err(|e| format!("tokio: {e}"))?;
    }
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
enum ArbiterMsg {
    Start,
    Started,
}
enum SmokerMsg {
    /// `Smoke(round, time)`.
    Smoke(u64, u64),
    Exit,
}

/// The arbiter: after the last round's `Started` (no smoker sends it anything more), it tells
/// every smoker to exit and ends.
async fn cig_arbiter(
    mut rx: Mailbox<ArbiterMsg>,
    smokers: Vec<Addr<SmokerMsg>>,
    rounds: u64,
    smoke: u64,
) {
    let mut started = 0;
    while let Some(m) = rx.recv().await {
        if let ArbiterMsg::Started = m {
            started += 1;
        }
        if started == rounds {
            for s in &smokers {
                send(s, SmokerMsg::Exit);
            }
            return;
        }
        let (smoker, time) = common::cig_round(started, smokers.len() as u64, smoke);
        send(&smokers[smoker as usize], SmokerMsg::Smoke(started, time));
    }
}

async fn smoker(mut rx: Mailbox<SmokerMsg>, arbiter: Addr<ArbiterMsg>, done: Arc<Done>) {
    let mut sum = 0u64;
    while let Some(m) = rx.recv().await {
        match m {
            SmokerMsg::Smoke(round, time) => {
                send(&arbiter, ArbiterMsg::Started);
                sum = sum.wrapping_add(common::busy(round, time));
            }
            SmokerMsg::Exit => {
                done.report(sum);
                return;
            }
        }
    }
}

pub(super) async fn cigarette_smokers(
    smokers: u64,
    rounds: u64,
    smoke: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let (arbiter, arbiter_rx) = unbounded_channel();
    let list = (0..smokers)
        .map(|_| {
            let (arbiter, done) = (arbiter.clone(), done.clone());
            spawn(move |rx| smoker(rx, arbiter, done))
        })
        .collect();
    drop(done);
    tokio::spawn(cig_arbiter(arbiter_rx, list, rounds, smoke));
    send(&arbiter, ArbiterMsg::Start);
    drop(arbiter);
    common::wait(rx).await
}
