use super::*;

#[test]
fn no_cache_line_holds_senders_bytes_and_the_batch() {
    let batch = std::mem::offset_of!(Mailbox, batch);
    assert!(batch >= BATCH_AT);
    assert_eq!(
        SENDERS_END,
        std::mem::offset_of!(Mailbox, flags) + std::mem::size_of::<UnsafeCell<Flags>>()
    );
    for line in (-64i64..256).step_by(16) {
        let covers = |from: usize, to: usize| (from as i64) < line + 64 && (to as i64) > line;
        assert!(
            !(covers(0, SENDERS_END) && covers(batch, batch + std::mem::size_of::<CopyQueue>())),
            "a line at {line} holds the senders' part and the batch"
        );
    }
    // Within glibc's fastbins (see the type's docs).
    assert!(std::mem::size_of::<Mailbox>() <= 112);
}
