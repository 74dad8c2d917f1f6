use super::prelude::*;

#[test]
fn partition_is_contiguous_and_complete() {
    for workers in 1..9 {
        for queues in workers..70 {
            let ranges = partition(queues, workers);
            let mut next = 0;
            for (w, r) in ranges.iter().enumerate() {
                assert_eq!(r.start, next);
                assert!(r.len() == queues / workers || r.len() == queues / workers + 1);
                for s in r.clone() {
                    assert_eq!(owner_of(&ranges, s), w);
                }
                next = r.end;
            }
            assert_eq!(next, queues);
        }
    }
}
