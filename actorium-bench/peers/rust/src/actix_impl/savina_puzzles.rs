//! Workloads `sleeping-barber`, `cigarette-smokers` (the system and its set-up: the parent
//! module).

use super::*;

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    me: Addr<Factory>,
    /// Customers are placed like every other actor (round-robin, in creation order).
    placer: Arc<Placer>,
    room: Addr<WaitingRoom>,
    customers: u64,
    arrival: u64,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    _me: Addr<WaitingRoom>,
    chairs: usize,
    /// Seated customers with their tokens, longest-seated first.
    seated: VecDeque<(Addr<Customer>, u64)>,
    barber: Option<Addr<Barber>>,
    asleep: bool,
}
struct Barber {
    _me: Addr<Barber>,
    cut: u64,
    room: Addr<WaitingRoom>,
}
struct Customer {
    me: Addr<Customer>,
    id: u64,
    token: u64,
    factory: Addr<Factory>,
}
struct SetBarber(Addr<Barber>);
/// `Enter(customer, token)`.
struct Enter(Addr<Customer>, u64);
struct Full;
/// A customer told `Full`, back at the factory: `Returned(customer, token)`.
struct Returned(Addr<Customer>, u64);
/// `Cut(customer, token)`.
struct Cut(Addr<Customer>, u64);
struct NextCustomer;
/// The spec's `Done(v)`.
struct HaircutDone(u64);
/// `Served(id, v)`.
struct Served(u64, u64);
actor!(Factory, WaitingRoom, Barber, Customer);
message!(
    SetBarber,
    Enter,
    Full,
    Returned,
    Cut,
    NextCustomer,
    HaircutDone,
    Served
);
stoppable!(Barber);

impl Factory {
    /// Reports the sum to main and ends, with the room (which ends the barber).
    fn finish(&self, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        self.room.do_send(Stop);
        ctx.stop();
    }
}

impl Handler<Start> for Factory {
    type Result = ();

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) {
        for id in 0..self.customers {
            let token = common::busy(id, self.arrival);
            let factory = self.me.clone();
            let c = self.placer.start(move |me| Customer {
                me,
                id,
                token,
                factory,
            });
            self.room.do_send(Enter(c, token));
        }
        if self.customers == 0 {
            self.finish(ctx);
        }
    }
}

impl Handler<Returned> for Factory {
    type Result = ();

    fn handle(&mut self, Returned(c, token): Returned, _: &mut Context<Self>) {
        self.room.do_send(Enter(c, token));
    }
}

impl Handler<Served> for Factory {
    type Result = ();

    fn handle(&mut self, Served(_id, v): Served, ctx: &mut Context<Self>) {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            self.finish(ctx);
        }
    }
}

impl WaitingRoom {
    fn barber(&self) -> &Addr<Barber> {
        self.barber.as_ref().expect("barber set")
    }
}

impl Handler<SetBarber> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, SetBarber(b): SetBarber, _: &mut Context<Self>) {
        self.barber = Some(b);
    }
}

impl Handler<Enter> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, Enter(c, token): Enter, _: &mut Context<Self>) {
        if self.seated.len() == self.chairs {
            c.do_send(Full);
        } else if self.asleep {
            self.asleep = false;
            self.barber().do_send(Cut(c, token));
        } else {
            self.seated.push_back((c, token));
        }
    }
}

impl Handler<NextCustomer> for WaitingRoom {
    type Result = ();

    fn handle(&mut self, _: NextCustomer, _: &mut Context<Self>) {
        match self.seated.pop_front() {
            Some((c, token)) => self.barber().do_send(Cut(c, token)),
            None => self.asleep = true,
        }
    }
}

impl Handler<Stop> for WaitingRoom {
    type Result = ();

    /// The room and the barber hold each other's address: the room ends both.
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.barber().do_send(Stop);
        ctx.stop();
    }
}

impl Handler<Cut> for Barber {
    type Result = ();

    fn handle(&mut self, Cut(c, token): Cut, _: &mut Context<Self>) {
        c.do_send(HaircutDone(common::busy(token, self.cut)));
        self.room.do_send(NextCustomer);
    }
}

impl Handler<Full> for Customer {
    type Result = ();

    fn handle(&mut self, _: Full, _: &mut Context<Self>) {
        self.factory.do_send(Returned(self.me.clone(), self.token));
    }
}

impl Handler<HaircutDone> for Customer {
    type Result = ();

    fn handle(&mut self, HaircutDone(v): HaircutDone, ctx: &mut Context<Self>) {
        self.factory.do_send(Served(self.id, v));
        ctx.stop();
    }
}

pub(super) async fn sleeping_barber(
    p: &Arc<Placer>,
    customers: u64,
    room: u64,
    arrival: u64,
    cut: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(1);
    let chairs = room as usize;
    let room = p.start(move |_me| WaitingRoom {
        _me,
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: None,
        asleep: true,
    });
    let barber = {
        let room = room.clone();
        p.start(move |_me| Barber { _me, cut, room })
    };
    room.do_send(SetBarber(barber));
    let placer = p.clone();
    let factory = p.start(move |me| Factory {
        me,
        placer,
        room,
        customers,
        arrival,
        served: 0,
        sum: 0,
        done,
    });
    factory.do_send(Start);
    drop(factory);
    common::wait(rx).await
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
/// The arbiter (`actix::Arbiter` is the thread).
struct CigArbiter {
    _me: Addr<CigArbiter>,
    smokers: Vec<Addr<Smoker>>,
    rounds: u64,
    smoke: u64,
    started: u64,
}
struct Smoker {
    _me: Addr<Smoker>,
    arbiter: Addr<CigArbiter>,
    sum: u64,
    done: Arc<Done>,
}
/// The arbiter's smokers (sent before `Start`).
struct Smokers(Vec<Addr<Smoker>>);
/// `Smoke(round, time)`.
struct Smoke(u64, u64);
struct Started;
struct Exit;
actor!(CigArbiter, Smoker);
message!(Smokers, Smoke, Started, Exit);

impl CigArbiter {
    /// Starts round `self.started`, or, after the last one, tells every smoker to exit and ends.
    fn next_round(&mut self, ctx: &mut Context<Self>) {
        if self.started == self.rounds {
            for s in &self.smokers {
                s.do_send(Exit);
            }
            ctx.stop();
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, self.smokers.len() as u64, self.smoke);
        self.smokers[smoker as usize].do_send(Smoke(round, time));
    }
}

impl Handler<Smokers> for CigArbiter {
    type Result = ();

    fn handle(&mut self, Smokers(list): Smokers, _: &mut Context<Self>) {
        self.smokers = list;
    }
}

impl Handler<Start> for CigArbiter {
    type Result = ();

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) {
        self.next_round(ctx);
    }
}

impl Handler<Started> for CigArbiter {
    type Result = ();

    fn handle(&mut self, _: Started, ctx: &mut Context<Self>) {
        self.started += 1;
        self.next_round(ctx);
    }
}

impl Handler<Smoke> for Smoker {
    type Result = ();

    fn handle(&mut self, Smoke(round, time): Smoke, _: &mut Context<Self>) {
        self.arbiter.do_send(Started);
        self.sum = self.sum.wrapping_add(common::busy(round, time));
    }
}

impl Handler<Exit> for Smoker {
    type Result = ();

    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.done.report(self.sum);
        ctx.stop();
    }
}

pub(super) async fn cigarette_smokers(
    p: &Placer,
    smokers: u64,
    rounds: u64,
    smoke: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let arbiter = p.start(move |_me| CigArbiter {
        _me,
        smokers: Vec::new(),
        rounds,
        smoke,
        started: 0,
    });
    let list = (0..smokers)
        .map(|_| {
            let (arbiter, done) = (arbiter.clone(), done.clone());
            p.start(move |_me| Smoker {
                _me,
                arbiter,
                sum: 0,
                done,
            })
        })
        .collect();
    drop(done);
    arbiter.do_send(Smokers(list));
    arbiter.do_send(Start);
    drop(arbiter);
    common::wait(rx).await
}
