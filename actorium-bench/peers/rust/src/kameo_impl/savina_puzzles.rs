//! Workloads `sleeping-barber`, `cigarette-smokers` (the system and its set-up: the parent
//! module).

use super::*;

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    customers: u64,
    arrival: u64,
    room: ActorRef<WaitingRoom>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    chairs: usize,
    seated: VecDeque<(ActorRef<Customer>, u64)>,
    barber: Arc<OnceLock<ActorRef<Barber>>>,
    asleep: bool,
}
struct Barber {
    cut: u64,
    room: ActorRef<WaitingRoom>,
}
struct Customer {
    id: u64,
    token: u64,
    factory: ActorRef<Factory>,
}
/// A customer and its token.
struct Enter(ActorRef<Customer>, u64);
struct Full;
/// A customer the room turned away, with its token: send it in again.
struct Returned(ActorRef<Customer>, u64);
/// A customer and its token.
struct Cut(ActorRef<Customer>, u64);
struct NextCustomer;
struct HaircutDone(u64);
/// `Served(id, value)`.
struct Served(u64, u64);
struct Close;
actor!(Factory, WaitingRoom, Barber, Customer);

impl Factory {
    fn finish(&self, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

impl Message<Start> for Factory {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        for id in 0..self.customers {
            let token = common::busy(id, self.arrival);
            let c = spawn(Customer {
                id,
                token,
                factory: ctx.actor_ref().clone(),
            });
            send(&self.room, Enter(c, token));
        }
        if self.customers == 0 {
            self.finish(ctx);
        }
    }
}

impl Message<Returned> for Factory {
    type Reply = ();

    async fn handle(&mut self, Returned(c, token): Returned, _: &mut Context<Self, ()>) {
        send(&self.room, Enter(c, token));
    }
}

impl Message<Served> for Factory {
    type Reply = ();

    async fn handle(&mut self, Served(_id, v): Served, ctx: &mut Context<Self, ()>) {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            self.finish(ctx);
        }
    }
}

impl Message<Enter> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, Enter(c, token): Enter, _: &mut Context<Self, ()>) {
        if self.seated.len() == self.chairs {
            send(&c, Full);
        } else if self.asleep {
            self.asleep = false;
            send(self.barber.get().expect("barber set"), Cut(c, token));
        } else {
            self.seated.push_back((c, token));
        }
    }
}

impl Message<NextCustomer> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, _: NextCustomer, _: &mut Context<Self, ()>) {
        match self.seated.pop_front() {
            Some((c, token)) => send(self.barber.get().expect("barber set"), Cut(c, token)),
            None => self.asleep = true,
        }
    }
}

impl Message<Close> for WaitingRoom {
    type Reply = ();

    async fn handle(&mut self, _: Close, ctx: &mut Context<Self, ()>) {
        ctx.stop();
    }
}

impl Message<Cut> for Barber {
    type Reply = ();

    async fn handle(&mut self, Cut(c, token): Cut, _: &mut Context<Self, ()>) {
        send(&c, HaircutDone(common::busy(token, self.cut)));
        send(&self.room, NextCustomer);
    }
}

impl Message<Close> for Barber {
    type Reply = ();

    async fn handle(&mut self, c: Close, ctx: &mut Context<Self, ()>) {
        // After the last `NextCustomer` this barber sent the room.
        send(&self.room, c);
        ctx.stop();
    }
}

impl Message<Full> for Customer {
    type Reply = ();

    async fn handle(&mut self, _: Full, ctx: &mut Context<Self, ()>) {
        send(&self.factory, Returned(ctx.actor_ref().clone(), self.token));
    }
}

impl Message<HaircutDone> for Customer {
    type Reply = ();

    async fn handle(&mut self, HaircutDone(v): HaircutDone, ctx: &mut Context<Self, ()>) {
        send(&self.factory, Served(self.id, v));
        ctx.stop();
    }
}

pub(super) async fn sleeping_barber(
    customers: u64,
    room: u64,
    arrival: u64,
    cut: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let chairs = room as usize;
    let slot = Arc::new(OnceLock::new());
    let room = spawn(WaitingRoom {
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: slot.clone(),
        asleep: true,
    });
    let barber = spawn(Barber {
        cut,
        room: room.clone(),
    });
    let _ = slot.set(barber.clone());
    let factory = spawn(Factory {
        customers,
        arrival,
        room,
        served: 0,
        sum: 0,
        done,
    });
    send(&factory, Start);
    drop(factory);
    let total = common::wait(rx).await?;
    // The barber closes the room after its last `NextCustomer`, so no message finds the room
    // gone.
    send(&barber, Close);
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter {
    smokers: Arc<OnceLock<Vec<ActorRef<Smoker>>>>,
    rounds: u64,
    smoke: u64,
    /// Rounds started (smokers that answered `StartedSmoking`).
    started: u64,
}
struct Smoker {
    arbiter: ActorRef<Arbiter>,
    sum: u64,
    done: Arc<Done>,
}
struct Smoke {
    round: u64,
    time: u64,
}
struct StartedSmoking;
struct ExitSmoker;
actor!(Arbiter, Smoker);

impl Arbiter {
    /// Starts round `self.started`, or tells every smoker to exit after the last one.
    fn next_round(&self, ctx: &mut Context<Self, ()>) {
        let smokers = self.smokers.get().expect("smokers set");
        if self.started == self.rounds {
            for s in smokers {
                send(s, ExitSmoker);
            }
            ctx.stop();
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, smokers.len() as u64, self.smoke);
        send(&smokers[smoker as usize], Smoke { round, time });
    }
}

impl Message<Start> for Arbiter {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        self.next_round(ctx);
    }
}

impl Message<StartedSmoking> for Arbiter {
    type Reply = ();

    async fn handle(&mut self, _: StartedSmoking, ctx: &mut Context<Self, ()>) {
        self.started += 1;
        self.next_round(ctx);
    }
}

impl Message<Smoke> for Smoker {
    type Reply = ();

    async fn handle(&mut self, Smoke { round, time }: Smoke, _: &mut Context<Self, ()>) {
        send(&self.arbiter, StartedSmoking);
        self.sum = self.sum.wrapping_add(common::busy(round, time));
    }
}

impl Message<ExitSmoker> for Smoker {
    type Reply = ();

    async fn handle(&mut self, _: ExitSmoker, ctx: &mut Context<Self, ()>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

pub(super) async fn cigarette_smokers(
    smokers: u64,
    rounds: u64,
    smoke: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let list = Arc::new(OnceLock::new());
    let arbiter = spawn(Arbiter {
        smokers: list.clone(),
        rounds,
        smoke,
        started: 0,
    });
    let all: Vec<_> = (0..smokers)
        .map(|_| {
            spawn(Smoker {
                arbiter: arbiter.clone(),
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    drop(done);
    let _ = list.set(all);
    send(&arbiter, Start);
    drop((arbiter, list));
    common::wait(rx).await
}
