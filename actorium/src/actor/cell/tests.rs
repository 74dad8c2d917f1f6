use super::*;

struct Small(#[allow(dead_code)] u8);
impl Actor for Small {}
struct Words(#[allow(dead_code)] [u64; 4]);
impl Actor for Words {}

#[test]
fn no_cache_line_holds_a_hot_header_byte_and_the_state() {
    let hot = crate::core::HOT_END;
    let state = std::mem::offset_of!(Cell<Small>, state);
    assert_eq!(std::mem::offset_of!(Cell<Small>, header), 0);
    // Every placement of a 64-byte line, in steps of 16 (the allocator's alignment),
    // relative to the `Arc`'s allocation (two counters, then the cell).
    for line in (-64i64..256).step_by(16) {
        let covers = |from: i64, to: i64| from < line + 64 && to > line;
        let hot_bytes = (16, 16 + hot as i64);
        let state_first = (16 + state as i64, 16 + state as i64 + 1);
        assert!(
            !(covers(hot_bytes.0, hot_bytes.1) && covers(state_first.0, state_first.1)),
            "a line at {line} holds hot header bytes and the state (state at {state})"
        );
    }
    // What it costs: a cell with a 32-byte state, plus the `Arc`'s counters, stays within
    // glibc's fastbins (requests up to 120 bytes): past them, spawn-heavy workloads are
    // measurably slower (`core/header.rs`).
    assert_eq!(state, 64, "the state starts one cache line in");
    assert!(std::mem::size_of::<Cell<Words>>() + 16 <= 120);
}
