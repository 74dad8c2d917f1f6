use super::XorShift;

#[test]
fn other_than_never_picks_me_and_reaches_everyone() {
    let mut r = XorShift::for_worker(3);
    let mut seen = [false; 5];
    for _ in 0..1000 {
        let v = r.other_than(2, 5);
        assert_ne!(v, 2);
        seen[v] = true;
    }
    assert_eq!(seen, [true, true, false, true, true]);
}
