// A fork handle borrows the scope it was forked in: it cannot be kept past the scope's body
// (dropped after the scope ended, it would record a panic in a scope that is gone).
use std::cell::RefCell;

thread_local! {
    static KEPT: RefCell<Option<actorium::Forked<'static, ()>>> = const { RefCell::new(None) };
}

fn main() {
    let system = actorium::ActorSystem::new().unwrap();
    system.scope(|s| {
        let h = s.fork(|| ());
        KEPT.with(|k| *k.borrow_mut() = Some(h));
    });
    system.stop();
}
