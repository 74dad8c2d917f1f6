//! The THE protocol, model-checked: an owner with two tasks pops both while a thief steals;
//! every task is taken exactly once, and a task the owner took is never also the thief's.
use super::*;
use crate::runtime::loom::sync::Arc;
use crate::runtime::tasks::JobHeader;
use loom::thread;

unsafe fn nothing(_: *const JobHeader) {}

/// With one public task (the other private) and with both public (two pops through the
/// protocol).
#[test]
fn owner_and_thief_never_take_the_same_task() {
    for want_public in [1, 2] {
        loom::model(move || {
            let headers: Arc<[JobHeader; 2]> =
                Arc::new([JobHeader::new(nothing, 1), JobHeader::new(nothing, 1)]);
            let d = Arc::new(Deque::default());
            // SAFETY: never executed; the headers outlive the refs (held by the Arc).
            let jobs = unsafe { [JobRef::new(&headers[0]), JobRef::new(&headers[1])] };
            d.push(jobs[0], want_public);
            d.push(jobs[1], want_public);
            let (d2, h2) = (d.clone(), headers.clone());
            let thief = thread::spawn(move || {
                let _keep = h2;
                d2.steal(1, 0).map(|j| j.as_ptr() as usize)
            });
            let mut mine = Vec::new();
            while let Some(j) = d.pop() {
                mine.push(j.as_ptr() as usize);
            }
            let stolen = thief.join().unwrap();
            let mut all = mine.clone();
            all.extend(stolen);
            all.sort_unstable();
            let mut want: Vec<usize> = jobs.iter().map(|j| j.as_ptr() as usize).collect();
            want.sort_unstable();
            assert_eq!(all, want, "owner took {mine:?}, thief {stolen:?}");
            if stolen.is_some() {
                // The thief takes the oldest, FIFO.
                assert_eq!(stolen, Some(jobs[0].as_ptr() as usize));
            }
        });
    }
}
