use actorium::{Actor, ActorSystem, Allocation, Context, Receive};

struct Greeter;
impl Actor for Greeter {}

struct Hello;
impl Receive<Hello> for Greeter {
    fn receive(&mut self, _: Hello, _: &mut Context<'_, Self>) -> Allocation {
        Allocation::Nodelete
    }
}

struct Goodbye; // no behaviour for this one

fn main() {
    let system = ActorSystem::new().unwrap();
    let greeter = system.spawn(Greeter);
    greeter.send(Hello).unwrap();
    greeter.send(Goodbye).unwrap(); // must not compile
    system.stop();
}
