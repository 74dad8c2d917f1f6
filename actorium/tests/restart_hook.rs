//! `Actor::restarted`: a supervised actor's new incarnation hears why the last one ended (its
//! own failure, or `Shutdown` for a sibling its supervisor's strategy restarted with it), after
//! its `started` hook and before the mail that waited; a first incarnation does not hear it.
//! On every executor.

mod common;

use actorium::{
    Actor, ActorSystem, Allocation, Context, ExitReason, Receive, Restart, Strategy, Supervisor,
};
use common::{on_every_executor, settle, watchdog};
use std::sync::mpsc;

/// Reports its hooks and messages as `(name, what)`; panics on `"fail"`.
struct Child {
    name: &'static str,
    out: mpsc::Sender<(&'static str, String)>,
}
impl Actor for Child {
    fn started(&mut self, _: &mut Context<'_, Self>) {
        self.out.send((self.name, "started".into())).unwrap();
    }
    fn restarted(&mut self, reason: ExitReason, _: &mut Context<'_, Self>) {
        self.out
            .send((self.name, format!("restarted: {reason:?}")))
            .unwrap();
    }
}
impl Receive<&'static str> for Child {
    fn receive(&mut self, m: &'static str, _: &mut Context<'_, Self>) -> Allocation {
        assert!(m != "fail", "asked to fail");
        self.out.send((self.name, m.into())).unwrap();
        Allocation::Nodelete
    }
}

#[test]
fn a_restarted_incarnation_hears_why_the_last_one_ended() {
    watchdog(60, || {
        on_every_executor(|_, choose| {
            let system = choose(ActorSystem::builder().workers(2)).build().unwrap();
            let sup = system.spawn(Supervisor::new(Strategy::OneForAll));
            let (out, rx) = mpsc::channel();
            let child = |name| {
                let out = out.clone();
                sup.supervise(Restart::Permanent, move || Child {
                    name,
                    out: out.clone(),
                })
                .unwrap()
            };
            let (a, _b) = (child("a"), child("b"));
            let mut got = Vec::new();
            let wait = |n: usize, got: &mut Vec<(&'static str, String)>| {
                settle(&system, 30, "the children's reports", || {
                    while let Ok(r) = rx.try_recv() {
                        got.push(r);
                    }
                    got.len() >= n
                });
            };
            // First incarnations: started only.
            wait(2, &mut got);
            assert!(got.iter().all(|(_, w)| w == "started"), "{got:?}");
            got.clear();
            a.send("fail").unwrap();
            a.send("after").unwrap();
            wait(5, &mut got);
            let of = |n: &str| -> Vec<String> {
                got.iter()
                    .filter(|(c, _)| *c == n)
                    .map(|(_, w)| w.clone())
                    .collect()
            };
            assert_eq!(
                of("a"),
                [
                    "started".to_string(),
                    "restarted: Panicked(\"asked to fail\")".into(),
                    "after".into()
                ]
            );
            assert_eq!(
                of("b"),
                ["started".to_string(), "restarted: Shutdown".into()]
            );
            drop(system);
        });
    });
}
