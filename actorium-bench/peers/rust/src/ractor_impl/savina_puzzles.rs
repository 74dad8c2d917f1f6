//! Workloads `sleeping-barber`, `cigarette-smokers` (the system and its set-up: the parent
//! module).

use super::*;

// ---- sleeping-barber (Savina's sleeping barber) ---------------------------------------------
struct Factory;
enum FactoryMsg {
    Start,
    /// A customer the room turned away, with its token: send it in again.
    Returned(ActorRef<CustomerMsg>, u64),
    /// `Served(id, value)`.
    Served(u64, u64),
}
struct FactoryState {
    customers: u64,
    arrival: u64,
    room: ActorRef<RoomMsg>,
    served: u64,
    sum: u64,
    done: Arc<Done>,
}
struct WaitingRoom;
enum RoomMsg {
    /// A customer and its token.
    Enter(ActorRef<CustomerMsg>, u64),
    Next,
    Close,
}
struct RoomState {
    chairs: usize,
    seated: VecDeque<(ActorRef<CustomerMsg>, u64)>,
    barber: Arc<OnceLock<ActorRef<BarberMsg>>>,
    asleep: bool,
}
struct Barber;
enum BarberMsg {
    /// A customer and its token.
    Cut(ActorRef<CustomerMsg>, u64),
    Close,
}
struct BarberState {
    cut: u64,
    room: ActorRef<RoomMsg>,
}
struct Customer;
enum CustomerMsg {
    Full,
    Done(u64),
}
struct CustomerState {
    id: u64,
    token: u64,
    factory: ActorRef<FactoryMsg>,
}

impl FactoryState {
    fn finish(&self, me: &ActorRef<FactoryMsg>) {
        self.done.report(self.sum);
        me.stop(None);
    }
}

impl Actor for Factory {
    type Msg = FactoryMsg;
    type State = FactoryState;
    type Arguments = FactoryState;

    async fn pre_start(
        &self,
        _: ActorRef<FactoryMsg>,
        args: FactoryState,
    ) -> Started<FactoryState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<FactoryMsg>,
        m: FactoryMsg,
        st: &mut FactoryState,
    ) -> Handled {
        match m {
            FactoryMsg::Start => {
                for id in 0..st.customers {
                    let token = common::busy(id, st.arrival);
                    let state = CustomerState {
                        id,
                        token,
                        factory: me.clone(),
                    };
                    let c = spawn(Customer, state).await;
                    send(&st.room, RoomMsg::Enter(c, token));
                }
                if st.customers == 0 {
                    st.finish(&me);
                }
            }
            FactoryMsg::Returned(c, token) => send(&st.room, RoomMsg::Enter(c, token)),
            FactoryMsg::Served(_id, v) => {
                st.sum = st.sum.wrapping_add(v);
                st.served += 1;
                if st.served == st.customers {
                    st.finish(&me);
                }
            }
        }
        Ok(())
    }
}

impl Actor for WaitingRoom {
    type Msg = RoomMsg;
    type State = RoomState;
    type Arguments = RoomState;

    async fn pre_start(&self, _: ActorRef<RoomMsg>, args: RoomState) -> Started<RoomState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<RoomMsg>, m: RoomMsg, st: &mut RoomState) -> Handled {
        let barber = st.barber.get().expect("barber set");
        match m {
            RoomMsg::Enter(c, token) => {
                if st.seated.len() == st.chairs {
                    send(&c, CustomerMsg::Full);
                } else if st.asleep {
                    st.asleep = false;
                    send(barber, BarberMsg::Cut(c, token));
                } else {
                    st.seated.push_back((c, token));
                }
            }
            RoomMsg::Next => match st.seated.pop_front() {
                Some((c, token)) => send(barber, BarberMsg::Cut(c, token)),
                None => st.asleep = true,
            },
            RoomMsg::Close => me.stop(None),
        }
        Ok(())
    }
}

impl Actor for Barber {
    type Msg = BarberMsg;
    type State = BarberState;
    type Arguments = BarberState;

    async fn pre_start(&self, _: ActorRef<BarberMsg>, args: BarberState) -> Started<BarberState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<BarberMsg>, m: BarberMsg, st: &mut BarberState) -> Handled {
        match m {
            BarberMsg::Cut(c, token) => {
                send(&c, CustomerMsg::Done(common::busy(token, st.cut)));
                send(&st.room, RoomMsg::Next);
            }
            BarberMsg::Close => {
                // After the last `Next` this barber sent the room.
                send(&st.room, RoomMsg::Close);
                me.stop(None);
            }
        }
        Ok(())
    }
}

impl Actor for Customer {
    type Msg = CustomerMsg;
    type State = CustomerState;
    type Arguments = CustomerState;

    async fn pre_start(
        &self,
        _: ActorRef<CustomerMsg>,
        args: CustomerState,
    ) -> Started<CustomerState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<CustomerMsg>,
        m: CustomerMsg,
        st: &mut CustomerState,
    ) -> Handled {
        match m {
            CustomerMsg::Full => send(&st.factory, FactoryMsg::Returned(me, st.token)),
            CustomerMsg::Done(v) => {
                send(&st.factory, FactoryMsg::Served(st.id, v));
                me.stop(None);
            }
        }
        Ok(())
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
    let room = spawn(
        WaitingRoom,
        RoomState {
            chairs,
            seated: VecDeque::with_capacity(chairs),
            barber: slot.clone(),
            asleep: true,
        },
    )
    .await;
    let barber = spawn(
        Barber,
        BarberState {
            cut,
            room: room.clone(),
        },
    )
    .await;
    let _ = slot.set(barber.clone());
    let factory = spawn(
        Factory,
        FactoryState {
            customers,
            arrival,
            room,
            served: 0,
            sum: 0,
            done,
        },
    )
    .await;
    send(&factory, FactoryMsg::Start);
    drop(factory);
    let total = common::wait(rx).await?;
    // The barber closes the room after its last `Next`, so no message finds the room gone.
    send(&barber, BarberMsg::Close);
    Ok(total)
}

// ---- cigarette-smokers (Savina's cigarette smokers) -----------------------------------------
struct Arbiter;
enum ArbiterMsg {
    Start,
    Started,
}
struct ArbiterState {
    smokers: Arc<OnceLock<Vec<ActorRef<SmokerMsg>>>>,
    rounds: u64,
    smoke: u64,
    /// Rounds started (smokers that answered `Started`).
    started: u64,
}
struct Smoker;
enum SmokerMsg {
    /// `Smoke(round, time)`.
    Smoke(u64, u64),
    Exit,
}
struct SmokerState {
    arbiter: ActorRef<ArbiterMsg>,
    sum: u64,
    done: Arc<Done>,
}

impl ArbiterState {
    /// Starts round `self.started`, or tells every smoker to exit after the last one.
    fn next_round(&self, me: &ActorRef<ArbiterMsg>) {
        let smokers = self.smokers.get().expect("smokers set");
        if self.started == self.rounds {
            for s in smokers {
                send(s, SmokerMsg::Exit);
            }
            me.stop(None);
            return;
        }
        let round = self.started;
        let (smoker, time) = common::cig_round(round, smokers.len() as u64, self.smoke);
        send(&smokers[smoker as usize], SmokerMsg::Smoke(round, time));
    }
}

impl Actor for Arbiter {
    type Msg = ArbiterMsg;
    type State = ArbiterState;
    type Arguments = ArbiterState;

    async fn pre_start(
        &self,
        _: ActorRef<ArbiterMsg>,
        args: ArbiterState,
    ) -> Started<ArbiterState> {
        Ok(args)
    }

    async fn handle(
        &self,
        me: ActorRef<ArbiterMsg>,
        m: ArbiterMsg,
        st: &mut ArbiterState,
    ) -> Handled {
        match m {
            ArbiterMsg::Start => st.next_round(&me),
            ArbiterMsg::Started => {
                st.started += 1;
                st.next_round(&me);
            }
        }
        Ok(())
    }
}

impl Actor for Smoker {
    type Msg = SmokerMsg;
    type State = SmokerState;
    type Arguments = SmokerState;

    async fn pre_start(&self, _: ActorRef<SmokerMsg>, args: SmokerState) -> Started<SmokerState> {
        Ok(args)
    }

    async fn handle(&self, me: ActorRef<SmokerMsg>, m: SmokerMsg, st: &mut SmokerState) -> Handled {
        match m {
            SmokerMsg::Smoke(round, time) => {
                send(&st.arbiter, ArbiterMsg::Started);
                st.sum = st.sum.wrapping_add(common::busy(round, time));
            }
            SmokerMsg::Exit => {
                st.done.report(st.sum);
                me.stop(None);
            }
        }
        Ok(())
    }
}

pub(super) async fn cigarette_smokers(
    smokers: u64,
    rounds: u64,
    smoke: u64,
) -> Result<u64, String> {
    let (done, rx) = Done::new(smokers);
    let list = Arc::new(OnceLock::new());
    let arbiter = spawn(
        Arbiter,
        ArbiterState {
            smokers: list.clone(),
            rounds,
            smoke,
            started: 0,
        },
    )
    .await;
    let mut all = Vec::with_capacity(smokers as usize);
    for _ in 0..smokers {
        let state = SmokerState {
            arbiter: arbiter.clone(),
            sum: 0,
            done: done.clone(),
        };
        all.push(spawn(Smoker, state).await);
    }
    drop(done);
    let _ = list.set(all);
    send(&arbiter, ArbiterMsg::Start);
    drop((arbiter, list));
    common::wait(rx).await
}
