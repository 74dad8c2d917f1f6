//! Workloads `sleeping-barber`, `cigarette-smokers` (the system and its set-up: the parent
//! module).

use super::*;

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory {
    customers: u64,
    arrival: u64,
    room: Addr<WaitingRoom>,
    barber: Addr<Barber>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom {
    chairs: usize,
    seated: VecDeque<(Addr<Customer>, u64)>,
    barber: Addr<Barber>,
    asleep: bool,
}
struct Barber {
    cut: u64,
    room: Arc<OnceLock<Addr<WaitingRoom>>>,
}
struct Customer {
    id: u64,
    token: u64,
    factory: Addr<Factory>,
}
struct Enter(Addr<Customer>, u64);
struct Full;
struct Returned(Addr<Customer>, u64);
struct Cut(Addr<Customer>, u64);
struct NextCustomer;
struct HaircutDone(u64);
struct Served(u64, u64);
struct CloseRoom;
struct CloseBarber;
impl Actor for Factory {}
impl Actor for WaitingRoom {}
impl Actor for Barber {}
impl Actor for Customer {}
impl Factory {
    fn finish(&self) -> Allocation {
        self.done.report(self.sum);
        // The room and the barber hold each other: the barber ends, and ends the room after
        // its last `NextCustomer` (one sender, so in that order).
        self.barber.send(CloseBarber).unwrap();
        Allocation::Delete
    }
}
impl Receive<Start> for Factory {
    fn receive(&mut self, _: Start, ctx: &mut Context<'_, Self>) -> Allocation {
        for id in 0..self.customers {
            let token = busy(id, self.arrival);
            let c = ctx.spawn(Customer {
                id,
                token,
                factory: ctx.address(),
            });
            self.room.send(Enter(c, token)).unwrap();
        }
        if self.customers == 0 {
            return self.finish();
        }
        Allocation::Nodelete
    }
}
impl Receive<Returned> for Factory {
    fn receive(&mut self, Returned(c, token): Returned, _: &mut Context<'_, Self>) -> Allocation {
        self.room.send(Enter(c, token)).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Served> for Factory {
    fn receive(&mut self, Served(_id, v): Served, _: &mut Context<'_, Self>) -> Allocation {
        self.sum = self.sum.wrapping_add(v);
        self.served += 1;
        if self.served == self.customers {
            return self.finish();
        }
        Allocation::Nodelete
    }
}
impl Receive<Enter> for WaitingRoom {
    fn receive(&mut self, Enter(c, token): Enter, _: &mut Context<'_, Self>) -> Allocation {
        if self.seated.len() == self.chairs {
            c.send(Full).unwrap();
        } else if self.asleep {
            self.asleep = false;
            self.barber.send(Cut(c, token)).unwrap();
        } else {
            self.seated.push_back((c, token));
        }
        Allocation::Nodelete
    }
}
impl Receive<NextCustomer> for WaitingRoom {
    fn receive(&mut self, _: NextCustomer, _: &mut Context<'_, Self>) -> Allocation {
        match self.seated.pop_front() {
            Some((c, token)) => self.barber.send(Cut(c, token)).unwrap(),
            None => self.asleep = true,
        }
        Allocation::Nodelete
    }
}
impl Receive<CloseRoom> for WaitingRoom {
    fn receive(&mut self, _: CloseRoom, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Delete
    }
}
impl Receive<CloseBarber> for Barber {
    fn receive(&mut self, _: CloseBarber, _: &mut Context<'_, Self>) -> Allocation {
        self.room.get().unwrap().send(CloseRoom).unwrap();
        Allocation::Delete
    }
}
impl Receive<Cut> for Barber {
    fn receive(&mut self, Cut(c, token): Cut, _: &mut Context<'_, Self>) -> Allocation {
        c.send(HaircutDone(busy(token, self.cut))).unwrap();
        self.room.get().unwrap().send(NextCustomer).unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Full> for Customer {
    fn receive(&mut self, _: Full, ctx: &mut Context<'_, Self>) -> Allocation {
        self.factory
            .send(Returned(ctx.address(), self.token))
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<HaircutDone> for Customer {
    fn receive(&mut self, HaircutDone(v): HaircutDone, _: &mut Context<'_, Self>) -> Allocation {
        self.factory.send(Served(self.id, v)).unwrap();
        Allocation::Delete
    }
}

pub(super) fn sleeping_barber(s: &ActorSystem, p: &Params) -> u64 {
    let done = Done::new(1);
    let (chairs, cut) = (p.get("room") as usize, p.get("cut"));
    // Spawned from main, as on the peers; the barber learns the room's address once it exists.
    let room_addr = Arc::new(OnceLock::new());
    let barber = s.spawn(Barber {
        cut,
        room: room_addr.clone(),
    });
    let room = s.spawn(WaitingRoom {
        chairs,
        seated: VecDeque::with_capacity(chairs),
        barber: barber.clone(),
        asleep: true,
    });
    assert!(room_addr.set(room.clone()).is_ok());
    let factory = s.spawn(Factory {
        customers: p.get("customers"),
        arrival: p.get("arrival"),
        room,
        barber,
        served: 0,
        sum: 0,
        done: done.clone(),
    });
    factory.send(Start).unwrap();
    done.wait()
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter {
    smokers: Vec<Addr<Smoker>>,
    rounds: u64,
    smoke: u64,
    started: u64,
}
struct Smoker {
    arbiter: Arc<OnceLock<Addr<Arbiter>>>,
    sum: u64,
    done: Arc<Done>,
}
struct Smoke {
    round: u64,
    time: u64,
}
struct StartedSmoking;
struct ExitSmoker;
impl Actor for Arbiter {}
impl Actor for Smoker {}
impl Arbiter {
    /// Starts round `self.started`, or ends every smoker after the last one.
    fn next_round(&mut self) -> Allocation {
        if self.started == self.rounds {
            for s in &self.smokers {
                s.send(ExitSmoker).unwrap();
            }
            return Allocation::Delete;
        }
        let round = self.started;
        let (smoker, time) = cig_round(round, self.smokers.len() as u64, self.smoke);
        self.smokers[smoker as usize]
            .send(Smoke { round, time })
            .unwrap();
        Allocation::Nodelete
    }
}
impl Receive<Start> for Arbiter {
    fn receive(&mut self, _: Start, _: &mut Context<'_, Self>) -> Allocation {
        self.next_round()
    }
}
impl Receive<StartedSmoking> for Arbiter {
    fn receive(&mut self, _: StartedSmoking, _: &mut Context<'_, Self>) -> Allocation {
        self.started += 1;
        self.next_round()
    }
}
impl Receive<Smoke> for Smoker {
    fn receive(&mut self, m: Smoke, _: &mut Context<'_, Self>) -> Allocation {
        self.arbiter.get().unwrap().send(StartedSmoking).unwrap();
        self.sum = self.sum.wrapping_add(busy(m.round, m.time));
        Allocation::Nodelete
    }
}
impl Receive<ExitSmoker> for Smoker {
    fn receive(&mut self, _: ExitSmoker, _: &mut Context<'_, Self>) -> Allocation {
        self.done.report(self.sum);
        Allocation::Delete
    }
}

pub(super) fn cigarette_smokers(s: &ActorSystem, p: &Params) -> u64 {
    let smokers = p.get("smokers");
    let done = Done::new(smokers);
    let (rounds, smoke) = (p.get("rounds"), p.get("smoke"));
    // Spawned from main, as on the peers; the arbiter's address reaches the smokers once it
    // exists.
    let arbiter_addr = Arc::new(OnceLock::new());
    let list = (0..smokers)
        .map(|_| {
            s.spawn(Smoker {
                arbiter: arbiter_addr.clone(),
                sum: 0,
                done: done.clone(),
            })
        })
        .collect();
    let arbiter = s.spawn(Arbiter {
        smokers: list,
        rounds,
        smoke,
        started: 0,
    });
    assert!(arbiter_addr.set(arbiter.clone()).is_ok());
    arbiter.send(Start).unwrap();
    done.wait()
}
