//! Monitors: learn when an actor ends, and why ([`ExitReason`]), from a thread or async code
//! ([`Addr::monitor`], [`Recipient::monitor`], a [`Pending`]) or from another actor
//! ([`Context::monitor`], a continuation run on the watching actor); links
//! ([`Context::link`]). Either takes an [`Addr`] or a [`Recipient`] ([`ActorRef`]). See
//! `core/monitors.rs` for the bookkeeping.

use super::addr::{Addr, Recipient};
use super::ask::Pending;
use super::cell::{self, ThenFn};
use super::{Actor, Allocation, Context};
use crate::core::monitors::Watcher;
use crate::core::{ExitReason, Header};
use crate::runtime::oneshot::Slot;
use std::sync::Arc;

mod sealed {
    use crate::core::monitors::Watcher;
    /// What monitors and links need of an actor reference.
    pub trait Watched {
        /// Adds `w` to the actor's watchers (told once, when it ends); gives `w` back if it
        /// has ended.
        fn watch(&self, w: Watcher) -> Result<(), Watcher>;
        /// A watcher that runs the actor's `linked_exit` (its half of a link).
        fn link_watcher(&self) -> Watcher;
        /// The actor's header, if it is local.
        fn local_header(&self) -> Option<LocalHeader<'_>>;
    }
    /// A local actor's header (unnameable outside the crate).
    pub struct LocalHeader<'a>(pub(crate) &'a crate::core::Header);
}

/// Adds `w` to the watchers of the actor of `hdr` (a local cell).
pub(crate) fn watch_header(hdr: &Header, w: Watcher) -> Result<(), Watcher> {
    hdr.exec.shared().monitors.watch(hdr, w)
}

/// A reference to an actor that [`Context::monitor`] and [`Context::link`] accept: an
/// [`Addr`], or a [`Recipient`] (whatever the actor's type). Sealed.
pub trait ActorRef: sealed::Watched {}

impl<A: Actor> sealed::Watched for Addr<A> {
    fn watch(&self, w: Watcher) -> Result<(), Watcher> {
        watch_header(&self.cell().header, w)
    }
    fn link_watcher(&self) -> Watcher {
        link_watcher(self)
    }
    fn local_header(&self) -> Option<sealed::LocalHeader<'_>> {
        Some(sealed::LocalHeader(&self.cell().header))
    }
}
impl<A: Actor> ActorRef for Addr<A> {}

impl<M: Send + 'static> sealed::Watched for Recipient<M> {
    fn watch(&self, w: Watcher) -> Result<(), Watcher> {
        Recipient::watch(self, w)
    }
    fn link_watcher(&self) -> Watcher {
        Recipient::link_watcher(self)
    }
    fn local_header(&self) -> Option<sealed::LocalHeader<'_>> {
        Recipient::local_header(self).map(sealed::LocalHeader)
    }
}
impl<M: Send + 'static> ActorRef for Recipient<M> {}

/// A [`Pending`] resolved with the reason the actor `of` ends.
fn monitor_pending<W: sealed::Watched + ?Sized>(
    of: &W,
    (owner, target, drive): (*const (), *const (), Option<crate::core::ExecRef>),
) -> Pending<ExitReason> {
    let slot = Arc::new(Slot::default());
    let to = slot.clone();
    let w: Watcher = Box::new(move |r: &ExitReason| {
        let _ = to.send(r.clone());
    });
    if of.watch(w).is_err() {
        let _ = slot.send(ExitReason::NotAlive);
    }
    Pending::new(slot, owner, target, drive)
}

impl<M: Send + 'static> Recipient<M> {
    /// Resolves when the actor ends, with the reason, as [`Addr::monitor`].
    pub fn monitor(&self) -> Pending<ExitReason> {
        monitor_pending(self, self.pending_parts())
    }
}

impl<A: Actor> Addr<A> {
    /// Resolves when the actor ends, with the reason: `.wait()` for it on a thread, `.await`
    /// it in async code. An actor that has already ended resolves at once to
    /// [`ExitReason::NotAlive`].
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Context, ExitReason, Receive};
    /// struct Fragile;
    /// impl Actor for Fragile {}
    /// impl Receive<u8> for Fragile {
    ///     fn receive(&mut self, _: u8, _: &mut Context<'_, Self>) -> Allocation {
    ///         panic!("cannot take a u8")
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let a = system.spawn(Fragile);
    /// let down = a.monitor();
    /// a.send(1).unwrap();
    /// assert_eq!(down.wait()?, ExitReason::Panicked("cannot take a u8".into()));
    /// # system.stop();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn monitor(&self) -> Pending<ExitReason> {
        monitor_pending(self, self.pending_parts())
    }
}

impl<A: Actor> Context<'_, A> {
    /// Watches `other`: when it ends, `then` runs on this actor (as one of its behaviours, in
    /// turn with its messages) with the reason. If `other` has already ended, `then` runs with
    /// [`ExitReason::NotAlive`]. If this actor ends first, nothing runs, and the monitor is
    /// gone (as Erlang's: a long-lived actor watched by many short-lived ones keeps nothing of
    /// them; monitors of another system's or a remote actor stay until that one ends).
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Addr, Allocation, Context, DeleteMsg, ExitReason, Receive};
    /// use std::sync::mpsc;
    ///
    /// struct Worker;
    /// impl Actor for Worker {}
    /// struct Watch(Addr<Worker>);
    /// struct Watcher(mpsc::Sender<ExitReason>);
    /// impl Actor for Watcher {}
    /// impl Receive<Watch> for Watcher {
    ///     fn receive(&mut self, Watch(w): Watch, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         ctx.monitor(&w, |me: &mut Self, why, _| {
    ///             me.0.send(why).unwrap();
    ///             Allocation::Nodelete
    ///         });
    ///         w.send(DeleteMsg).unwrap(); // monitor set first: the end cannot be missed
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, rx) = mpsc::channel();
    /// let watcher = system.spawn(Watcher(tx));
    /// watcher.send(Watch(system.spawn(Worker))).unwrap();
    /// assert_eq!(rx.recv()?, ExitReason::PoisonPill);
    /// # drop(system);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn monitor<W, F>(&self, other: &W, then: F)
    where
        W: ActorRef + ?Sized,
        F: FnOnce(&mut A, ExitReason, &mut Context<'_, A>) -> Allocation + Send + 'static,
    {
        // Weak: a monitor must not keep the watching actor's cell alive.
        let me = self.address().downgrade();
        let incarnation = self.cell.header.incarnation();
        let w: Watcher = Box::new(move |r: &ExitReason| {
            let r = r.clone();
            let f: ThenFn<A> = Box::new(move |a: &mut A, ctx: &mut Context<'_, A>| then(a, r, ctx));
            if let Some(me) = me.upgrade() {
                // Refused: the watcher ended meanwhile (a dead letter if it was respawned).
                let _ = cell::send_then(me.cell(), incarnation, f);
            }
        });
        // An actor of this system: the monitor is this actor's, and goes at its end (as
        // Erlang's); another system's or a remote one is watched as from outside.
        let mine = &self.cell.header;
        let monitors = &mine.exec.shared().monitors;
        let r = match other
            .local_header()
            .filter(|h| std::ptr::eq(&h.0.exec.shared().monitors, monitors))
        {
            Some(sealed::LocalHeader(theirs)) => monitors.watch_owned(theirs, w, mine),
            None => other.watch(w),
        };
        if let Err(w) = r {
            w(&ExitReason::NotAlive);
        }
    }
}

/// A watcher that runs `B::linked_exit` on `peer` when the watched actor ends.
/// (The link is with the incarnation of `peer` installed now: a respawned peer is not linked.)
pub(super) fn link_watcher<B: Actor>(peer: &Addr<B>) -> Watcher {
    let incarnation = peer.cell().header.incarnation();
    let peer = peer.downgrade();
    Box::new(move |r: &ExitReason| {
        let r = r.clone();
        let f: ThenFn<B> =
            Box::new(move |b: &mut B, ctx: &mut Context<'_, B>| b.linked_exit(r, ctx));
        if let Some(peer) = peer.upgrade() {
            // Refused: the peer ended meanwhile (a dead letter if it was respawned).
            let _ = cell::send_then(peer.cell(), incarnation, f);
        }
    })
}

impl<A: Actor> Context<'_, A> {
    /// Links this actor and `other` (Erlang's `link`): when either ends, the other's
    /// [`Actor::linked_exit`] runs with the reason, as one of its behaviours. By default a
    /// failure ([`ExitReason::is_abnormal`]) takes the survivor down too (reason
    /// [`ExitReason::Linked`], passed on along further links); a normal end does not. If
    /// `other` has already ended, this actor's `linked_exit` runs with
    /// [`ExitReason::NotAlive`] (not a failure: it goes on). As in Erlang, links between two
    /// actors of one system are a set: linking a pair again, from either side, changes
    /// nothing. (A link with an actor of another system or of a remote node is added at each
    /// call: link such a pair once.)
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Addr, Allocation, Context, ExitReason, Receive};
    /// use std::sync::mpsc;
    ///
    /// struct Partner;
    /// impl Actor for Partner {}
    /// impl Receive<&'static str> for Partner {
    ///     fn receive(&mut self, s: &'static str, _: &mut Context<'_, Self>) -> Allocation {
    ///         panic!("{s}")
    ///     }
    /// }
    /// struct Linker(mpsc::Sender<()>);
    /// impl Actor for Linker {}
    /// impl Receive<Addr<Partner>> for Linker {
    ///     fn receive(&mut self, p: Addr<Partner>, ctx: &mut Context<'_, Self>) -> Allocation {
    ///         ctx.link(&p);
    ///         self.0.send(()).unwrap();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let (tx, linked) = mpsc::channel();
    /// let (linker, partner) = (system.spawn(Linker(tx)), system.spawn(Partner));
    /// let down = linker.monitor();
    /// linker.send(partner.clone()).unwrap();
    /// linked.recv()?;
    /// partner.send("broken").unwrap(); // the partner fails...
    /// assert_eq!(down.wait()?, ExitReason::Linked); // ...and takes the linker with it
    /// # drop(system);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn link<W: ActorRef + ?Sized>(&self, other: &W) {
        let me = self.address();
        let mine = &self.cell.header;
        let monitors = &mine.exec.shared().monitors;
        if let Some(sealed::LocalHeader(theirs)) = other
            .local_header()
            .filter(|h| std::ptr::eq(&h.0.exec.shared().monitors, monitors))
        {
            // Both in this system: one link per pair (a set, as Erlang's). (Its incarnation
            // before its half is made: the half is for that one.)
            let their_inc = theirs.incarnation();
            let to_them = other.link_watcher();
            if let Err((w, reason)) =
                monitors.link(mine, theirs, link_watcher(&me), (to_them, their_inc))
            {
                w(&reason);
            }
            return;
        }
        // Another system's actor, or a remote one: each call links once more.
        // Its end reaches this actor...
        if let Err(w) = other.watch(link_watcher(&me)) {
            w(&ExitReason::NotAlive);
            return;
        }
        // ...and this actor's end reaches it.
        if let Err(w) = watch_header(&self.cell.header, other.link_watcher()) {
            w(&ExitReason::NotAlive);
        }
    }
}

#[cfg(all(test, not(loom)))]
#[path = "monitor_tests.rs"]
mod tests;
