use crate::runtime::loom::sync::atomic::{AtomicU8, Ordering};
use crate::runtime::loom::sync::Arc;
use loom::thread;

const MONITORED: u8 = 4;
const ALIVE: u8 = 0;
const ENDED: u8 = 2;

/// The handshake of the module docs, re-stated on loom's atomics (the header's are `std`'s):
/// an actor ends (stores its terminal status, then reads `join` by an RMW) while a monitor
/// is set (an RMW sets the flag, then the status is read). Never both "the watcher was
/// stored" (the status read alive) and "the end saw no flag": that watcher would wait for
/// ever. A handle dropped meanwhile (another RMW of `join`) changes nothing.
#[test]
fn loom_a_monitor_racing_the_end_is_never_missed() {
    loom::model(|| {
        let status = Arc::new(AtomicU8::new(ALIVE));
        let join = Arc::new(AtomicU8::new(1));
        let end = {
            let (status, join) = (status.clone(), join.clone());
            thread::spawn(move || {
                status.store(ENDED, Ordering::Release);
                join.fetch_or(0, Ordering::AcqRel) & MONITORED != 0
            })
        };
        let handle = {
            let join = join.clone();
            thread::spawn(move || {
                join.fetch_and(!1, Ordering::AcqRel);
            })
        };
        join.fetch_or(MONITORED, Ordering::AcqRel);
        let stored = status.load(Ordering::Acquire) == ALIVE;
        let seen = end.join().unwrap();
        handle.join().unwrap();
        assert!(
            !stored || seen,
            "a watcher stored while the actor ended was missed"
        );
    });
}
