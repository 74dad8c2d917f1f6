//! The hello-world program of the Cforall actor system (Colby Parsons, MMath thesis, Waterloo
//! 2023, Figure "CFA Actor Syntax") in actorium.
//!
//! Run: `cargo run --release --example quickstart`

use actorium::{Actor, ActorSystem, Allocation, Context, FinishedMsg, Receive};

struct MyActor;
impl Actor for MyActor {}

struct StrMsg(String);
struct IntMsg(i32);

impl Receive<StrMsg> for MyActor {
    fn receive(&mut self, msg: StrMsg, _: &mut Context<'_, Self>) -> Allocation {
        println!("string message \"{}\"", msg.0);
        Allocation::Nodelete // actor not finished
    }
}

impl Receive<IntMsg> for MyActor {
    fn receive(&mut self, msg: IntMsg, _: &mut Context<'_, Self>) -> Allocation {
        println!("integer message {}", msg.0);
        Allocation::Nodelete
    }
}

fn main() {
    let system = ActorSystem::new().expect("start the actor system"); // start_actor_system()
    let actor = system.spawn(MyActor);
    actor.send(StrMsg("Hello World".into())).unwrap(); // actor << str_msg << int_msg
    actor.send(IntMsg(42)).unwrap();
    actor.send(IntMsg(42)).unwrap(); // actor << int_msg
    actor.send(FinishedMsg).unwrap(); // actor << finished_msg: terminate the actor
    system.stop(); // stop_actor_system(): waits until every actor has finished
}
