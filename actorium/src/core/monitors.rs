//! Monitors: who wants to know when an actor ends, and why ([`ExitReason`]).
//!
//! One map per system from a cell's address to its watchers, under one mutex: only monitored
//! actors pay anything (a flag in the header tells termination whether to look). The
//! handshake between a new monitor and the actor's end (neither may miss the other), with no
//! fence, through read-modify-writes of the header's `join` byte:
//! - `watch`: under the lock, set the `MONITORED` flag (`fetch_or`, AcqRel), then read the
//!   status (Acquire): alive, the watcher is stored; ended, it is handed back (the caller
//!   reports [`ExitReason::NotAlive`]);
//! - `ended`, after the executor stored the terminal status: read the flag by an RMW of `join`
//!   (`fetch_or(0)`, AcqRel); set, take the watchers under the lock and call them.
//!
//! The two RMWs are ordered in `join`'s modification order (every write of `join` is an RMW).
//! If `ended`'s comes later, it reads the flag. If it comes first, `watch`'s RMW reads its
//! value (Acquire from Release), so the terminal status, stored before it, happens before
//! `watch` reads the status: `watch` sees the actor ended. So a watcher stored after `watch`
//! saw the actor alive is always found by `ended` (which takes the lock after `watch` stored
//! it). Model: `monitors_loom.rs` (it fails with a plain load in `ended`). (The RMW avoids a
//! SeqCst fence on every actor's end, which showed in send-heavy profiles.)

use super::header::{Header, Status};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Why an actor ended, as its monitors are told.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitReason {
    /// A behaviour ended it: it returned [`crate::Allocation::Delete`], `Destroy` or
    /// `Finished`, or called [`crate::Context::stop`].
    Normal,
    /// A behaviour, a hook (`started`, `stopped`) or the function that builds the state (a
    /// restart's factory, `spawn_with`) panicked; the panic message.
    Panicked(String),
    /// A poison pill ([`crate::DeleteMsg`], [`crate::DestroyMsg`], [`crate::FinishedMsg`]).
    PoisonPill,
    /// Its system shut down: [`crate::ActorSystem::shutdown`] asked it to end, or the system
    /// was stopped or dropped while it lived.
    Shutdown,
    /// It had already ended when the monitor was set (as Erlang's `noproc`).
    NotAlive,
    /// An actor linked to it failed ([`crate::Context::link`]), and it did not handle the
    /// notice ([`crate::Actor::linked_exit`]).
    Linked,
    /// A supervisor gave up: its children failed more often than its restart intensity
    /// allows ([`crate::Supervisor::intensity`]), and it had no supervisor of its own to
    /// restart it (or that one gave up too).
    Escalated,
    /// The actor is on another node, and the link to that node was lost (the node ended, or
    /// was unreachable past its lease): it may still run, unreachable. Erlang's
    /// `noconnection`. (Remote actors, feature `remote`.)
    NodeDown,
}

impl ExitReason {
    /// Whether this end is a failure that links pass on and transient children are restarted
    /// after: [`Self::Panicked`], [`Self::Linked`], [`Self::Escalated`] and
    /// [`Self::NodeDown`].
    pub fn is_abnormal(&self) -> bool {
        matches!(
            self,
            ExitReason::Panicked(_)
                | ExitReason::Linked
                | ExitReason::Escalated
                | ExitReason::NodeDown
        )
    }
}

impl std::fmt::Display for ExitReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitReason::Normal => f.write_str("ended normally"),
            ExitReason::Panicked(m) => write!(f, "panicked: {m}"),
            ExitReason::PoisonPill => f.write_str("ended by a poison pill"),
            ExitReason::Shutdown => f.write_str("stopped by its system's shutdown"),
            ExitReason::NotAlive => f.write_str("had already ended when monitored"),
            ExitReason::Linked => f.write_str("ended with a linked actor that failed"),
            ExitReason::Escalated => f.write_str("a supervisor exceeded its restart intensity"),
            ExitReason::NodeDown => f.write_str("the link to its node was lost"),
        }
    }
}

/// Told once, when the watched actor ends.
pub(crate) type Watcher = Box<dyn FnOnce(&ExitReason) + Send>;

/// The watchers of one system's actors.
#[derive(Default)]
pub(crate) struct Monitors {
    map: Mutex<Table>,
}

/// Per actor (by its cell's address): its watchers, and the links among this system's actors
/// that it has (so that a pair is linked once, Erlang's set of links).
///
/// Each watcher is kept with the incarnation it watches (the one alive when it was set): a
/// respawn can make the next incarnation alive, and monitored anew, before the old one's end
/// has told its watchers (the executor releases the actor's queue between the two), and that
/// end must tell only its own. (A monitor set while a respawn races the actor's end may watch
/// the new incarnation: its incarnation is read after the status, never before, where it could
/// name an incarnation whose end has already been told.)
///
/// A watcher set by another actor of this system (its monitor, or its half of a link) is
/// *owned* by that actor's incarnation, and removed at its end, as Erlang drops a process's
/// monitors and links when it exits: kept, a long-lived actor's list would hold a watcher
/// (and, through it, the memory of a cell) for every short-lived actor that ever watched it.
#[derive(Default)]
struct Table {
    /// Per watched actor, its watchers by number (in the order they were set).
    watchers: HashMap<usize, BTreeMap<u64, Entry>>,
    /// For each linked actor: (partner's address, partner's incarnation, own incarnation) per
    /// link (a link holds between two incarnations: a respawned actor is linked afresh).
    links: HashMap<usize, HashSet<(usize, u8, u8)>>,
    /// Per owning actor, the watchers it set: number -> what it watches.
    owned: HashMap<usize, HashMap<u64, Owned>>,
    /// The next watcher's number.
    next: u64,
}

/// A watcher an actor set, as its owner's record keeps it.
#[derive(Clone, Copy)]
struct Owned {
    /// The watched actor.
    watched: usize,
    /// The owner's incarnation that set it.
    inc: u8,
    /// Half of a link (else a monitor).
    link: bool,
}

/// A watcher in a watched actor's list.
struct Entry {
    /// The incarnation it watches.
    inc: u8,
    /// The actor of this system that set it, if one did (see [`Table`]).
    owner: Option<usize>,
    w: Watcher,
}

/// What an actor's end takes out of the table, to run (or drop) outside the lock.
type Taken = (Vec<Watcher>, Vec<Watcher>);

impl Table {
    /// Adds `w`, watching incarnation `inc` of the actor at `watched`, owned by incarnation
    /// `owner.1` of the actor at `owner.0` if given (`link`: as half of a link).
    fn add(&mut self, watched: usize, inc: u8, owner: Option<(usize, u8)>, link: bool, w: Watcher) {
        let id = self.next;
        self.next += 1;
        let entry = Entry {
            inc,
            owner: owner.map(|o| o.0),
            w,
        };
        self.watchers.entry(watched).or_default().insert(id, entry);
        if let Some((o, own)) = owner {
            let rec = Owned {
                watched,
                inc: own,
                link,
            };
            self.owned.entry(o).or_default().insert(id, rec);
        }
    }

    /// Removes the watchers that incarnation `inc` of the actor at `k` set (only its monitors
    /// unless `links` too); returns them, to be dropped.
    fn take_owned(&mut self, k: usize, inc: u8, links: bool) -> Vec<Watcher> {
        let Some(mine) = self.owned.get(&k) else {
            return Vec::new();
        };
        let gone: Vec<(u64, usize)> = mine
            .iter()
            .filter(|(_, o)| o.inc == inc && (links || !o.link))
            .map(|(&id, o)| (id, o.watched))
            .collect();
        gone.into_iter()
            .filter_map(|(id, watched)| self.remove(watched, id))
            .collect()
    }

    /// Removes watcher `id` of the actor at `watched` (and its owner's record of it).
    fn remove(&mut self, watched: usize, id: u64) -> Option<Watcher> {
        let list = self.watchers.get_mut(&watched)?;
        let e = list.remove(&id)?;
        if list.is_empty() {
            self.watchers.remove(&watched);
        }
        if let Some(o) = e.owner {
            if let Some(mine) = self.owned.get_mut(&o) {
                mine.remove(&id);
                if mine.is_empty() {
                    self.owned.remove(&o);
                }
            }
        }
        Some(e.w)
    }

    /// Incarnation `inc` of the actor at `k` ended: its links go (on both sides), the
    /// watchers it owns elsewhere go (to be dropped), and its own watchers of `inc` are taken
    /// (to be told).
    fn end(&mut self, k: usize, inc: u8) -> Taken {
        if let Some(links) = self.links.get_mut(&k) {
            let mut ended = Vec::new();
            links.retain(|&(partner, p_inc, own)| {
                let keep = own != inc;
                if !keep {
                    ended.push((partner, p_inc));
                }
                keep
            });
            if links.is_empty() {
                self.links.remove(&k);
            }
            for (partner, p_inc) in ended {
                if let Some(l) = self.links.get_mut(&partner) {
                    l.remove(&(k, inc, p_inc));
                    if l.is_empty() {
                        self.links.remove(&partner);
                    }
                }
            }
        }
        let dropped = self.take_owned(k, inc, true);
        let mut told = Vec::new();
        if let Some(list) = self.watchers.get(&k) {
            let ids: Vec<u64> = list
                .iter()
                .filter(|(_, e)| e.inc == inc)
                .map(|(&id, _)| id)
                .collect();
            for id in ids {
                told.extend(self.remove(k, id));
            }
        }
        (dropped, told)
    }
}

impl Monitors {
    /// Adds `w` to the watchers of `hdr`'s actor; gives it back if the actor has ended.
    pub(crate) fn watch(&self, hdr: &Header, w: Watcher) -> Result<(), Watcher> {
        self.watch_as(hdr, w, None)
    }

    /// As [`Self::watch`], for a watcher set by `owner`, an actor of this system (it runs a
    /// behaviour now): the watcher goes at `owner`'s end.
    pub(crate) fn watch_owned(
        &self,
        hdr: &Header,
        w: Watcher,
        owner: &Header,
    ) -> Result<(), Watcher> {
        self.watch_as(hdr, w, Some(owner))
    }

    fn watch_as(&self, hdr: &Header, w: Watcher, owner: Option<&Header>) -> Result<(), Watcher> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        // (The owner's end must look at the table too. It runs a behaviour now, so its end
        // comes after this on its own thread.)
        if let Some(o) = owner {
            o.mark_monitored();
        }
        hdr.mark_monitored();
        if hdr.status() != Status::Alive {
            return Err(w);
        }
        // (Read after the status, as in `link`: the incarnation alive now.)
        let owner = owner.map(|o| (key(o), o.incarnation()));
        map.add(key(hdr), hdr.incarnation(), owner, false, w);
        Ok(())
    }

    /// Links the actors of `a` and `b` (both of this system): `to_a` (told when `b` ends) goes
    /// to `b`'s watchers and `to_b` to `a`'s, unless these incarnations are linked already
    /// (then both are dropped, outside the lock). As [`Self::watch`] for each side: if `b` has
    /// ended, nothing is added and `to_a` comes back to be told `NotAlive`; if `a` has, `to_b`
    /// comes back. Each half is owned by the actor it tells.
    ///
    /// `to_b` is made for incarnation `b_inc` of `b` (read before): if another one is alive
    /// now, the one meant has ended, and `to_a` comes back to be told `NotAlive`.
    pub(crate) fn link(
        &self,
        a: &Header,
        b: &Header,
        to_a: Watcher,
        (to_b, b_inc): (Watcher, u8),
    ) -> Result<(), (Watcher, ExitReason)> {
        let (ka, kb) = (key(a), key(b));
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        a.mark_monitored();
        b.mark_monitored();
        if b.status() != Status::Alive || b.incarnation() != b_inc {
            drop(map);
            drop(to_b);
            return Err((to_a, ExitReason::NotAlive));
        }
        // (Read after the status: the incarnations recorded are those alive now.)
        let (ia, ib) = (a.incarnation(), b.incarnation());
        let linked = map
            .links
            .get(&ka)
            .is_some_and(|l| l.contains(&(kb, ib, ia)));
        if linked {
            drop(map);
            drop((to_a, to_b));
            return Ok(());
        }
        if a.status() != Status::Alive {
            drop(map);
            drop(to_a);
            return Err((to_b, ExitReason::NotAlive));
        }
        map.add(kb, ib, Some((ka, ia)), true, to_a);
        map.add(ka, ia, Some((kb, ib)), true, to_b);
        map.links.entry(ka).or_default().insert((kb, ib, ia));
        map.links.entry(kb).or_default().insert((ka, ia, ib));
        Ok(())
    }

    /// Incarnation `inc` of `hdr`'s actor ended (its terminal status is stored; `inc` read
    /// before, while it was alive): tells its watchers, if any, and drops those it set on
    /// others. (The check inline, the rest out of line: most actors are never monitored.)
    #[inline]
    pub(crate) fn ended(&self, hdr: &Header, inc: u8, reason: &ExitReason) {
        if hdr.monitored() {
            self.tell_watchers(hdr, inc, reason);
        }
    }

    /// A supervised actor's state is replaced by a restart (it is gone; the next one runs
    /// `started` anew, with the same incarnation number): the monitors it set go, as a
    /// restarted Erlang child's. (Its links, and the watchers set on it, stay: a restart is no
    /// end.)
    pub(crate) fn restarting(&self, hdr: &Header) {
        if hdr.monitored() {
            let dropped = self
                .map
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take_owned(key(hdr), hdr.incarnation(), false);
            drop_all(dropped);
        }
    }

    #[cold]
    #[inline(never)]
    fn tell_watchers(&self, hdr: &Header, inc: u8, reason: &ExitReason) {
        let (dropped, told) = self
            .map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .end(key(hdr), inc);
        drop_all(dropped);
        for w in told {
            // A watcher only sends (a reply slot, a continuation to its actor); a refused
            // continuation is dropped, and user code in it may panic: the others are told
            // all the same.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| w(reason))) {
                super::report_panic("a monitor's notice (dropping its continuation)", &*p);
                super::drop_payload(p);
            }
        }
    }

    /// How many watchers are kept, over all actors (for tests).
    #[cfg(test)]
    pub(crate) fn watchers(&self) -> usize {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.watchers.values().map(BTreeMap::len).sum()
    }
}

/// Drops watchers taken out of the table, outside its lock (a watcher holds addresses, whose
/// drop may end a cell), each on its own (a panicking destructor is reported).
fn drop_all(watchers: Vec<Watcher>) {
    for w in watchers {
        if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(w))) {
            super::report_panic("a monitor's notice (dropping it)", &*p);
            super::drop_payload(p);
        }
    }
}

/// An actor's key in the table: its header's (and cell's) address.
fn key(hdr: &Header) -> usize {
    hdr as *const Header as usize
}

#[cfg(all(test, loom))]
#[path = "monitors_loom.rs"]
mod loom_tests;
