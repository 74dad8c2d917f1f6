use super::*;

#[test]
fn move_all_if_at_most_moves_only_a_short_enough_list() {
    let links: Vec<Link> = (0..3).map(|_| Link::new()).collect();
    let (from, to) = (ActorList::new(), ActorList::new());
    let other = Link::new();
    // SAFETY: `other` is valid, on no list, and outlives `to`'s use here.
    unsafe { to.link(&other) };
    for l in &links {
        // SAFETY: each link is valid, on no list, and outlives `from`'s use here.
        unsafe { from.link(l) };
    }
    let count = |l: &ActorList| {
        let mut n = 0;
        l.for_each(|_| n += 1);
        n
    };
    let mut seen = Vec::new();
    // SAFETY: this thread is the only user of both lists (no lock needed), and they differ.
    let refused = unsafe { from.move_all_if_at_most(&to, 2, |l| seen.push(l)) };
    assert_eq!(refused, None, "3 members, at most 2");
    assert!(seen.is_empty());
    assert_eq!(
        (count(&from), count(&to)),
        (3, 1),
        "a refusal moves nothing"
    );
    // SAFETY: as above.
    let moved = unsafe { from.move_all_if_at_most(&to, 3, |l| seen.push(l)) };
    assert_eq!(moved, Some(3));
    assert!(from.is_empty());
    assert_eq!(count(&to), 4, "the three join the one already there");
    for l in &links {
        assert!(seen.contains(&(l as *const Link)));
        let mut on_to = false;
        to.for_each(|m| on_to |= std::ptr::eq(m, l));
        assert!(on_to);
    }
    // SAFETY: as above.
    let none = unsafe { from.move_all_if_at_most(&to, 0, |_| ()) };
    assert_eq!(none, Some(0), "an empty list is short enough");
}
