use super::*;

#[test]
fn pending_work_runs_before_finish_and_abort_wins() {
    let s = Signal::new();
    s.raise(PENDING);
    s.raise(FINISH);
    assert!(s.wait(), "pending work first");
    assert!(!s.wait(), "then finish");
    let s = Signal::new();
    s.raise(PENDING);
    s.raise(ABORT);
    assert!(!s.wait(), "abort ends at once");
}
