//! The intrusive list of live actors, threaded through the actor cells' [`Link`]s, so that a
//! system dropped while running can find, stop and drop every actor still alive.
//!
//! Invariants: a link is on at most one list; every access to a list and to the links on it is
//! made under the lock that guards that list (the message-centric executor's work-queue lock, or a
//! [`Registry`] shard's spinlock); a cell stays alive while its link is on a list (the system's
//! reference to it is released only after it is unlinked, or by the shutdown that took it).

use crate::runtime::spinlock::SpinLock;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::ptr;

/// Intrusive list links, embedded in every actor cell header ([`super::Header::from_link`] finds the header from them).
#[derive(Debug)]
pub(crate) struct Link {
    prev: Cell<*const Link>,
    next: Cell<*const Link>,
}

impl Link {
    pub(crate) fn new() -> Self {
        Self {
            prev: Cell::new(ptr::null()),
            next: Cell::new(ptr::null()),
        }
    }
}

/// A list head. Not synchronised: its owner guards it (see the module invariants).
#[derive(Debug)]
pub(crate) struct ActorList {
    head: Cell<*const Link>,
}

impl ActorList {
    pub(crate) fn new() -> Self {
        Self {
            head: Cell::new(ptr::null()),
        }
    }

    /// Adds a live actor's links.
    ///
    /// # Safety
    /// The caller holds this list's lock; `link` is valid, on no list, and stays valid until
    /// [`Self::unlink`] or [`Self::take`] removes it.
    pub(crate) unsafe fn link(&self, link: *const Link) {
        let head = self.head.get();
        // SAFETY: caller contract for `link`; `head` is on this list (guarded by the caller).
        unsafe {
            (*link).prev.set(ptr::null());
            (*link).next.set(head);
            if !head.is_null() {
                (*head).prev.set(link);
            }
        }
        self.head.set(link);
    }

    /// Removes an actor's links.
    ///
    /// # Safety
    /// The caller holds this list's lock; `link` is on this list.
    pub(crate) unsafe fn unlink(&self, link: *const Link) {
        // SAFETY: caller contract: `link` and its neighbours are on this list, guarded by us.
        unsafe {
            let (prev, next) = ((*link).prev.get(), (*link).next.get());
            if prev.is_null() {
                self.head.set(next);
            } else {
                (*prev).next.set(next);
            }
            if !next.is_null() {
                (*next).prev.set(prev);
            }
            (*link).prev.set(ptr::null());
            (*link).next.set(ptr::null());
        }
    }

    /// Whether the list has no member. The caller holds this list's lock.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.get().is_null()
    }

    /// Calls `f` with each member. The caller holds this list's lock.
    pub(crate) fn for_each(&self, mut f: impl FnMut(*const Link)) {
        let mut cur = self.head.get();
        while !cur.is_null() {
            f(cur);
            // SAFETY: members of the list are valid until removed (the `link` contract).
            cur = unsafe { (*cur).next.get() };
        }
    }

    /// Moves every member onto `to` if there are at most `max`, calling `f` with each, and
    /// returns how many; otherwise leaves both lists as they are and returns `None` (having
    /// looked at `max + 1` members at most). Allocates nothing.
    ///
    /// # Safety
    /// The caller holds this list's lock and `to`'s, and `to` is another list.
    pub(crate) unsafe fn move_all_if_at_most(
        &self,
        to: &ActorList,
        max: usize,
        mut f: impl FnMut(*const Link),
    ) -> Option<usize> {
        let mut n = 0;
        let mut cur = self.head.get();
        while !cur.is_null() {
            if n == max {
                return None;
            }
            n += 1;
            // SAFETY: members of the list are valid until removed (the `link` contract).
            cur = unsafe { (*cur).next.get() };
        }
        let mut cur = self.head.replace(ptr::null());
        while !cur.is_null() {
            // SAFETY: `cur` was a member, so it is valid; its successor is read before `link`
            // rewrites its links.
            let next = unsafe { (*cur).next.get() };
            // SAFETY: this list no longer reaches `cur` (its head was cleared), so it is on no
            // list; `to` is guarded by the caller; members stay valid until removed.
            unsafe { to.link(cur) };
            f(cur);
            cur = next;
        }
        Some(n)
    }

    /// Empties the list, returning its members. The caller holds this list's lock.
    pub(crate) fn take(&self) -> Vec<*const Link> {
        let mut out = Vec::new();
        let mut cur = self.head.replace(ptr::null());
        while !cur.is_null() {
            out.push(cur);
            // SAFETY: members of the list are valid until removed (the `link` contract).
            cur = unsafe { (*cur).next.get() };
        }
        out
    }
}

/// Live-actor lists for actors that have no work queue to hang on (mailbox actors: every actor
/// of the actor-centric executor, detached actors on any executor), sharded by ticket so that
/// concurrent spawns rarely meet on one lock.
pub(crate) struct Registry {
    shards: Box<[CachePadded<(SpinLock, ActorList)>]>,
}

// SAFETY: each shard's list is only touched under the shard's spinlock.
unsafe impl Sync for Registry {}
// SAFETY: as above; the raw links belong to cells kept alive while listed.
unsafe impl Send for Registry {}

impl Registry {
    pub(crate) fn new(shards: usize) -> Self {
        Self {
            shards: (0..shards.max(1))
                .map(|_| CachePadded::new((SpinLock::new(), ActorList::new())))
                .collect(),
        }
    }

    /// Runs `f` with shard `ticket % shards` locked (link and unlink actors there).
    pub(crate) fn locked<R>(&self, ticket: usize, f: impl FnOnce(&ActorList) -> R) -> R {
        let (lock, list) = &*self.shards[ticket % self.shards.len()];
        let _g = lock.lock();
        f(list)
    }

    /// Takes and releases every shard's lock once (the shutdown barrier: a registration that
    /// passed its `closed()` check under a shard lock has finished by the time this returns).
    pub(crate) fn locked_all(&self) {
        for shard in self.shards.iter() {
            drop(shard.0.lock());
        }
    }

    /// Calls `f` with each member of every shard, under that shard's lock.
    pub(crate) fn for_each(&self, mut f: impl FnMut(*const Link)) {
        for shard in self.shards.iter() {
            let _g = shard.0.lock();
            shard.1.for_each(&mut f);
        }
    }

    /// Empties every shard (shutdown), returning the members.
    pub(crate) fn take_all(&self) -> Vec<*const Link> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            let _g = shard.0.lock();
            out.extend(shard.1.take());
        }
        out
    }
}

#[cfg(all(test, not(loom)))]
#[path = "actor_list_tests.rs"]
mod tests;
