use super::*;

/// A worker that left its row (marking it exited itself) and ends later must not mark the
/// row exited again: by then a resize may have added the row back with a new thread and begun
/// removing that one. The row leaving again is the new thread's; marked exited for it, that
/// thread would never leave (a removed worker leaves only from a leaving row), and the
/// shutdown joining it would wait for ever. A worker that ends otherwise (the shutdown) while
/// its row is leaving marks it exited.
#[test]
fn a_worker_that_left_does_not_end_the_row_its_successor_is_leaving() {
    let pool = Pool::<()>::new(2, 2, false, Mode::Off, 2, |_| ()).unwrap();
    let state = &pool.table().slots[1].state;
    state.store(LEAVING, Ordering::SeqCst);
    pool.ended(1, Ended::Left);
    assert_eq!(
        state.load(Ordering::SeqCst),
        LEAVING,
        "its successor's, left alone"
    );
    pool.ended(1, Ended::Other);
    assert_eq!(state.load(Ordering::SeqCst), EXITED);
}
