//! Addresses, send errors and join handles.

use super::ask::{Ask, Pending, ReplyTo};
use super::cell::{self, Cell};
use super::{Actor, Receive};
use crate::core::Status;
use crate::runtime::context::{detached_actor_of, must_not_block, runs_for};
use crate::runtime::oneshot::Slot;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Weak};

/// The address of an actor: cheap to clone, usable from any thread (`Send + Sync`), inside or
/// outside behaviours.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Context, Receive};
/// struct Echo;
/// impl Actor for Echo {}
/// impl Receive<String> for Echo {
///     fn receive(&mut self, s: String, _: &mut Context<'_, Self>) -> Allocation {
///         assert_eq!(s, "hi");
///         Allocation::Delete
///     }
/// }
/// let system = ActorSystem::new().unwrap();
/// let echo = system.spawn(Echo);
/// let also_echo = echo.clone();
/// std::thread::spawn(move || also_echo.send("hi".to_string()).unwrap()).join().unwrap();
/// system.stop();
/// ```
pub struct Addr<A: Actor> {
    cell: Arc<Cell<A>>,
}

impl<A: Actor> Addr<A> {
    pub(crate) fn from_cell(cell: Arc<Cell<A>>) -> Self {
        Self { cell }
    }

    pub(crate) fn cell(&self) -> &Cell<A> {
        &self.cell
    }

    /// The cell as a [`Recipient`]'s target.
    pub(super) fn target<M: Send + 'static>(&self) -> &dyn Target<M>
    where
        A: Receive<M>,
    {
        &*self.cell
    }

    /// The actor's system (its identity), its cell, and its executor if the caller drives it:
    /// what a [`Pending`] about this actor needs.
    pub(crate) fn pending_parts(&self) -> (*const (), *const (), Option<crate::core::ExecRef>) {
        let exec = &self.cell.header.exec;
        (exec.shared().id(), self.cell.raw(), exec.if_caller_driven())
    }

    /// Asks the actor the question `msg` and returns its reply on the way: `.wait()` for it on
    /// a thread, `.await` it in async code (see [`Ask`] for the answering side, and
    /// [`crate::Context::ask`] inside a behaviour).
    ///
    /// # Errors
    /// [`SendError`] with `msg` inside if the actor has ended (`?` into an
    /// [`crate::AskError`] turns it into [`crate::AskError::Dead`]).
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, Allocation, Ask, AskError, Context, Receive};
    /// struct Squares;
    /// impl Actor for Squares {}
    /// impl Receive<Ask<u64, u64>> for Squares {
    ///     fn receive(&mut self, a: Ask<u64, u64>, _: &mut Context<'_, Self>) -> Allocation {
    ///         a.reply.send(a.msg * a.msg).ok();
    ///         Allocation::Nodelete
    ///     }
    /// }
    /// let system = ActorSystem::new()?;
    /// let sq = system.spawn(Squares);
    /// let pending: Vec<_> = (1..=3).map(|n| sq.ask(n).unwrap()).collect(); // in flight together
    /// let replies: Result<Vec<u64>, AskError> = pending.into_iter().map(|p| p.wait()).collect();
    /// assert_eq!(replies?, [1, 4, 9]);
    /// # drop(system);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ask<M, R>(&self, msg: M) -> Result<Pending<R>, SendError<M>>
    where
        A: Receive<Ask<M, R>>,
        M: Send + 'static,
        R: Send + 'static,
    {
        ask_cell(&*self.cell, msg)
    }

    /// A weak address: it does not keep the actor's cell alive (no reference cycle when an
    /// actor keeps its own address, or two actors each other's). [`WeakAddr::upgrade`] gives
    /// the address back while anything else holds it.
    pub fn downgrade(&self) -> WeakAddr<A> {
        WeakAddr {
            cell: Arc::downgrade(&self.cell),
        }
    }

    /// This address as a [`Recipient`] of `M`: any actor that receives `M`, one type.
    pub fn recipient<M: Send + 'static>(&self) -> Recipient<M>
    where
        A: Receive<M>,
    {
        Recipient {
            to: self.cell.clone(),
        }
    }

    /// Sends `msg` to the actor. Allocates nothing in steady state for messages up to 32 bytes
    /// (larger ones are boxed). It does not wait for the actor: it appends the message under a
    /// short spinlock (the receiver's message queue or mailbox, held for a few instructions by
    /// each sender), and may make one system call to wake a sleeping worker. Sending to an idle
    /// actor of the work-sharing policy takes that policy's mutex, and to an idle detached
    /// actor its thread's mutex, for as long.
    ///
    /// Messages from one sender to one actor are received in send order.
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has terminated (or its system has stopped).
    #[inline]
    pub fn send<M: Send + 'static>(&self, msg: M) -> Result<(), SendError<M>>
    where
        A: Receive<M>,
    {
        cell::send(&self.cell, msg).map_err(SendError)
    }

    /// The actor's queue ticket: the index of the message queue that carries all its messages.
    /// Actors spawned from outside the workers get tickets in spawn order: the first one per
    /// queue round-robin, then runs of consecutive spawns per queue
    /// ([`crate::SystemHandle::queue_of_spawn`] says which, when nothing else spawns
    /// concurrently). With [`crate::SystemHandle::worker_of_queue`] this
    /// lets a program place actors on workers, as the balance benchmarks of the Cforall actor
    /// system (Colby Parsons, MMath thesis, Waterloo 2023) do.
    ///
    /// With queue stealing on (the default) the executor places actors too: an actor spawned
    /// by a behaviour gets a queue of its spawner's worker, and an actor that other actors keep
    /// handing messages one at a time moves into their queue (its ticket changes, while
    /// nothing is queued for it). The value is then a snapshot.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem};
    /// struct A;
    /// impl Actor for A {}
    /// // (Compaction off: with it, one worker starts active and owns every queue.)
    /// let system = ActorSystem::builder()
    ///     .workers(2)
    /// #   .tune("cpus=2").unwrap() // (the layout of a host with a CPU per worker)
    ///     .queues_per_worker(4)
    ///     .compaction(false)
    ///     .build()
    ///     .unwrap();
    /// let a: Vec<_> = (0..9).map(|_| system.spawn(A)).collect();
    /// assert_eq!(a[0].queue(), 0);
    /// assert_eq!(a[8].queue(), 0); // 8 queues, round-robin
    /// assert_eq!(system.handle().worker_of_queue(a[5].queue()), 1);
    /// # drop(system);
    /// ```
    #[doc(hidden)]
    // Hidden: a view of the message-centric executor's placement, for the benchmark suite's
    // balance workloads (which load chosen workers, as the Cforall actor thesis's do) and the
    // placement tests; placement may change in any release, so this is no stable interface.
    pub fn queue(&self) -> usize {
        self.cell.header.queue()
    }

    /// Whether the actor still accepts messages.
    pub fn is_alive(&self) -> bool {
        self.cell.header.status() == Status::Alive
    }

    /// The actor's id, for logs and for matching an [`crate::Event`] about it (a supervised
    /// child's restart or end): [`crate::ActorId`].
    pub fn id(&self) -> crate::ActorId {
        crate::ActorId::of(self.cell.raw())
    }

    /// Puts `actor` into the cell of an actor that ended with [`crate::Allocation::Destroy`]:
    /// same address, same queue, no new allocation for the cell. Its `started` hook runs first;
    /// messages that were queued for the old incarnation are dropped, never delivered to the
    /// new one, and so are the old incarnation's reply continuations ([`crate::Context::ask`]),
    /// monitor reactions ([`crate::Context::monitor`]) and links ([`crate::Context::link`])
    /// that come after the respawn: they count as dead letters. (Incarnations are told apart
    /// by a count modulo 32: one made 32 respawns earlier would pass.) (On the default
    /// executor a message that a behaviour on another worker sent into the actor's backlog may
    /// still wait in that worker's outbox, to be queued within 64 of that worker's behaviours:
    /// the respawn waits for it, so that it is dropped too. See the executor's README, "Sends
    /// into a backlog".)
    ///
    /// # Errors
    /// Gives `actor` back if the actor is not `Destroyed` (alive, or ended another way), the
    /// system has stopped, or a graceful shutdown ([`crate::ActorSystem::shutdown`]) began.
    ///
    /// ```
    /// use actorium::{Actor, ActorSystem, DestroyMsg};
    /// struct Worker(u32);
    /// impl Actor for Worker {}
    /// let system = ActorSystem::new().unwrap();
    /// let addr = system.spawn(Worker(1));
    /// addr.send(DestroyMsg).unwrap();
    /// while addr.is_alive() { std::thread::yield_now(); }
    /// assert!(addr.respawn(Worker(2)).is_ok());
    /// assert!(addr.respawn(Worker(3)).is_err()); // alive again
    /// addr.send(DestroyMsg).unwrap();
    /// system.stop();
    /// ```
    pub fn respawn(&self, actor: A) -> Result<(), A> {
        cell::respawn(&self.cell, actor)
    }
}

impl<A: Actor> Clone for Addr<A> {
    fn clone(&self) -> Self {
        Self {
            cell: self.cell.clone(),
        }
    }
}

impl<A: Actor> PartialEq for Addr<A> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
}
impl<A: Actor> Eq for Addr<A> {}

impl<A: Actor> Hash for Addr<A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.cell).hash(state);
    }
}

impl<A: Actor> PartialOrd for Addr<A> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<A: Actor> Ord for Addr<A> {
    /// By cell address: a stable order while both live (for sorted collections).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        Arc::as_ptr(&self.cell).cmp(&Arc::as_ptr(&other.cell))
    }
}

/// The send side of an ask, on any cell (through an [`Addr`] or a [`Recipient`]).
fn ask_cell<T, M, R>(to: &T, msg: M) -> Result<Pending<R>, SendError<M>>
where
    T: Target<Ask<M, R>> + ?Sized,
    M: Send + 'static,
    R: Send + 'static,
{
    let slot = Arc::new(Slot::default());
    let ask = Ask {
        msg,
        reply: ReplyTo::slot(slot.clone()),
    };
    match to.deliver(ask) {
        Ok(()) => Ok(Pending::new(slot, to.owner(), to.cell_id(), to.driver())),
        Err(Ask { msg, reply }) => {
            reply.disarm();
            Err(SendError(msg))
        }
    }
}

/// What a [`Recipient`] needs of a cell: deliver an `M`, tell its identity.
pub(crate) trait Target<M>: Send + Sync {
    fn deliver(&self, msg: M) -> Result<(), M>;
    /// Delivers `msg` to a bounded actor with a permit of its room the caller took (given
    /// back, with the message, if the actor has ended).
    fn deliver_counted(&self, msg: M) -> Result<(), M>;
    /// The room of the actor's bounded mailbox, if it has one.
    fn room(&self) -> Option<&crate::runtime::permits::Permits>;
    fn alive(&self) -> bool;
    /// The cell's address (its identity).
    fn cell_id(&self) -> *const ();
    /// Its system's identity.
    fn owner(&self) -> *const ();
    fn actor_type(&self) -> &'static str;
    /// Its executor, if the caller drives it.
    fn driver(&self) -> Option<crate::core::ExecRef>;
    /// Adds `w` to the actor's watchers; gives it back if the actor has ended.
    fn watch(
        &self,
        w: crate::core::monitors::Watcher,
    ) -> Result<(), crate::core::monitors::Watcher>;
    /// A watcher that runs its `linked_exit` (its half of a link).
    fn link_watcher(&self) -> crate::core::monitors::Watcher;
    /// The cell's header, for a local actor (links are a set among local actors).
    fn local_header(&self) -> Option<&crate::core::Header> {
        None
    }
    /// Itself, to tell a cell from a remote actor's stand-in.
    #[cfg(feature = "remote")]
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<A: Receive<M>, M: Send + 'static> Target<M> for Cell<A> {
    #[inline]
    fn deliver(&self, msg: M) -> Result<(), M> {
        cell::send(self, msg)
    }
    fn deliver_counted(&self, msg: M) -> Result<(), M> {
        cell::send_counted(self, msg)
    }
    fn room(&self) -> Option<&crate::runtime::permits::Permits> {
        self.bound()
    }
    fn alive(&self) -> bool {
        self.header.status() == Status::Alive
    }
    fn cell_id(&self) -> *const () {
        self.raw()
    }
    fn owner(&self) -> *const () {
        self.header.exec.shared().id()
    }
    fn actor_type(&self) -> &'static str {
        std::any::type_name::<A>()
    }
    fn driver(&self) -> Option<crate::core::ExecRef> {
        self.header.exec.if_caller_driven()
    }
    fn watch(
        &self,
        w: crate::core::monitors::Watcher,
    ) -> Result<(), crate::core::monitors::Watcher> {
        super::monitor::watch_header(&self.header, w)
    }
    fn link_watcher(&self) -> crate::core::monitors::Watcher {
        super::monitor::link_watcher(&Addr::from_cell(cell::arc_of(self)))
    }
    fn local_header(&self) -> Option<&crate::core::Header> {
        Some(&self.header)
    }
    #[cfg(feature = "remote")]
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The address of any actor that receives `M`, whatever its type: a pipeline stage whose
/// next hop may be one of several actor types holds a `Recipient` of what it sends. Cheap to
/// clone (one reference count); equal, hashed and ordered by the actor it reaches.
/// A `Recipient<Ask<M, R>>` can [`ask`](Recipient::ask).
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Context, Receive, Recipient};
/// use std::sync::mpsc;
///
/// struct Upper(mpsc::Sender<String>);
/// impl Actor for Upper {}
/// impl Receive<String> for Upper {
///     fn receive(&mut self, s: String, _: &mut Context<'_, Self>) -> Allocation {
///         self.0.send(s.to_uppercase()).unwrap();
///         Allocation::Nodelete
///     }
/// }
/// struct Len(mpsc::Sender<String>);
/// impl Actor for Len {}
/// impl Receive<String> for Len {
///     fn receive(&mut self, s: String, _: &mut Context<'_, Self>) -> Allocation {
///         self.0.send(s.len().to_string()).unwrap();
///         Allocation::Nodelete
///     }
/// }
/// let system = ActorSystem::new()?;
/// let (tx, rx) = mpsc::channel();
/// let hops: Vec<Recipient<String>> = vec![
///     system.spawn(Upper(tx.clone())).recipient(),
///     system.spawn(Len(tx)).into(),
/// ];
/// for h in &hops {
///     h.send("abc".to_string()).unwrap();
/// }
/// let mut got = vec![rx.recv().unwrap(), rx.recv().unwrap()];
/// got.sort();
/// assert_eq!(got, ["3", "ABC"]);
/// # drop(system);
/// # Ok::<(), actorium::ConfigError>(())
/// ```
pub struct Recipient<M> {
    pub(super) to: Arc<dyn Target<M>>,
}

impl<M: Send + 'static> Recipient<M> {
    /// A recipient reaching `to` (a cell, or a remote actor's stand-in).
    #[cfg(feature = "remote")]
    pub(crate) fn from_target(to: Arc<dyn Target<M>>) -> Self {
        Self { to }
    }

    /// What it reaches.
    #[cfg(feature = "remote")]
    pub(crate) fn target(&self) -> &dyn Target<M> {
        &*self.to
    }

    /// Sends `msg`, as [`Addr::send`].
    ///
    /// # Errors
    /// [`SendError`], holding `msg`, if the actor has terminated.
    #[inline]
    pub fn send(&self, msg: M) -> Result<(), SendError<M>> {
        self.to.deliver(msg).map_err(SendError)
    }

    /// Whether the actor still accepts messages.
    pub fn is_alive(&self) -> bool {
        self.to.alive()
    }

    /// The actor's id (for logs; equal for every reference to one actor): [`crate::ActorId`].
    pub fn id(&self) -> crate::ActorId {
        crate::ActorId::of(self.to.cell_id())
    }

    /// Adds `w` to the actor's watchers (monitors and links); gives it back if it has ended.
    pub(crate) fn watch(
        &self,
        w: crate::core::monitors::Watcher,
    ) -> Result<(), crate::core::monitors::Watcher> {
        self.to.watch(w)
    }

    /// A watcher that runs the actor's `linked_exit` (its half of a link).
    pub(crate) fn link_watcher(&self) -> crate::core::monitors::Watcher {
        self.to.link_watcher()
    }

    /// The actor's header, if it is local.
    pub(crate) fn local_header(&self) -> Option<&crate::core::Header> {
        self.to.local_header()
    }

    /// As [`Addr::pending_parts`].
    pub(crate) fn pending_parts(&self) -> (*const (), *const (), Option<crate::core::ExecRef>) {
        (self.to.owner(), self.to.cell_id(), self.to.driver())
    }
}

impl<M: Send + 'static, R: Send + 'static> Recipient<Ask<M, R>> {
    /// Asks, as [`Addr::ask`].
    ///
    /// # Errors
    /// [`SendError`] with `msg` inside if the actor has ended.
    pub fn ask(&self, msg: M) -> Result<Pending<R>, SendError<M>> {
        ask_cell(&*self.to, msg)
    }
}

impl<A: Receive<M>, M: Send + 'static> From<Addr<A>> for Recipient<M> {
    fn from(a: Addr<A>) -> Self {
        Recipient { to: a.cell }
    }
}

impl<A: Receive<M>, M: Send + 'static> From<&Addr<A>> for Recipient<M> {
    fn from(a: &Addr<A>) -> Self {
        a.recipient()
    }
}

impl<M: Send + 'static> From<&Recipient<M>> for Recipient<M> {
    fn from(r: &Recipient<M>) -> Self {
        r.clone()
    }
}

impl<M> Clone for Recipient<M> {
    fn clone(&self) -> Self {
        Self {
            to: self.to.clone(),
        }
    }
}

impl<M: Send + 'static> PartialEq for Recipient<M> {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}
impl<M: Send + 'static> Eq for Recipient<M> {}

impl<M: Send + 'static> Hash for Recipient<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl<M: Send + 'static> fmt::Debug for Recipient<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recipient")
            .field("message", &std::any::type_name::<M>())
            .field("actor", &self.to.actor_type())
            .field("id", &self.id())
            .finish()
    }
}

/// A weak actor address ([`Addr::downgrade`]): holds no reference that keeps the actor's
/// cell alive, so an actor may keep its own (or a peer's) without a reference cycle.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Context, Receive, WeakAddr};
/// struct Ticker { me: Option<WeakAddr<Ticker>>, left: u32 }
/// impl Actor for Ticker {
///     fn started(&mut self, ctx: &mut Context<'_, Self>) {
///         self.me = Some(ctx.address().downgrade()); // no cycle through the state
///     }
/// }
/// impl Receive<()> for Ticker {
///     fn receive(&mut self, _: (), _: &mut Context<'_, Self>) -> Allocation {
///         self.left -= 1;
///         if self.left == 0 {
///             return Allocation::Delete;
///         }
///         // A self-send: the system holds the cell while the actor lives.
///         let me = self.me.as_ref().and_then(WeakAddr::upgrade).unwrap();
///         me.send(()).unwrap();
///         Allocation::Nodelete
///     }
/// }
/// let system = ActorSystem::new()?;
/// system.spawn(Ticker { me: None, left: 100 }).send(()).unwrap();
/// system.stop();
/// # Ok::<(), actorium::ConfigError>(())
/// ```
pub struct WeakAddr<A: Actor> {
    cell: Weak<Cell<A>>,
}

impl<A: Actor> WeakAddr<A> {
    /// The address, if the cell still exists (an address, a join handle or the system
    /// holds it: a live actor's cell always does).
    pub fn upgrade(&self) -> Option<Addr<A>> {
        self.cell.upgrade().map(Addr::from_cell)
    }
}

impl<A: Actor> Clone for WeakAddr<A> {
    fn clone(&self) -> Self {
        Self {
            cell: self.cell.clone(),
        }
    }
}

impl<A: Actor> fmt::Debug for WeakAddr<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakAddr")
            .field("actor", &std::any::type_name::<A>())
            .field("cell", &self.cell.as_ptr())
            .finish()
    }
}

/// A [`Recipient`] that does not keep the actor's cell alive: a subscriber list of weak
/// recipients holds no ended subscriber, and [`WeakRecipient::upgrade`] tells which have gone.
///
/// ```
/// use actorium::{Actor, ActorSystem, Allocation, Context, DeleteMsg, Receive, Recipient};
/// struct Session;
/// impl Actor for Session {}
/// impl Receive<String> for Session {
///     fn receive(&mut self, _: String, _: &mut Context<'_, Self>) -> Allocation {
///         Allocation::Nodelete
///     }
/// }
/// let system = ActorSystem::new()?;
/// let session = system.spawn(Session);
/// let weak = Recipient::<String>::from(&session).downgrade();
/// assert!(weak.upgrade().is_some());
/// let down = session.monitor();
/// session.send(DeleteMsg).unwrap();
/// drop(session);
/// down.wait()?;
/// # let t0 = std::time::Instant::now();
/// # while weak.upgrade().is_some() { assert!(t0.elapsed().as_secs() < 30); std::thread::yield_now(); }
/// assert!(weak.upgrade().is_none()); // ended, and nothing else holds it
/// system.stop();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WeakRecipient<M> {
    to: Weak<dyn Target<M>>,
}

impl<M: Send + 'static> Recipient<M> {
    /// A weak recipient of the same actor ([`WeakRecipient`]).
    pub fn downgrade(&self) -> WeakRecipient<M> {
        WeakRecipient {
            to: Arc::downgrade(&self.to),
        }
    }
}

impl<M: Send + 'static> WeakRecipient<M> {
    /// The recipient, if the actor's cell still exists (a live actor's cell always does; an
    /// ended one's goes once nothing else holds it).
    pub fn upgrade(&self) -> Option<Recipient<M>> {
        self.to.upgrade().map(|to| Recipient { to })
    }
}

impl<M> Clone for WeakRecipient<M> {
    fn clone(&self) -> Self {
        Self {
            to: self.to.clone(),
        }
    }
}

impl<M> fmt::Debug for WeakRecipient<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakRecipient")
            .field("message", &std::any::type_name::<M>())
            .field("cell", &self.to.as_ptr().cast::<()>())
            .finish()
    }
}

impl<A: Actor> fmt::Debug for Addr<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Addr")
            .field("actor", &std::any::type_name::<A>())
            .field("id", &self.id())
            .field("status", &self.cell.header.status())
            .finish()
    }
}

/// A send to an actor that no longer accepts messages. The message is inside, not lost.
///
/// ```
/// use actorium::{Actor, ActorSystem, DeleteMsg, SendError};
/// struct A;
/// impl Actor for A {}
/// let system = ActorSystem::new().unwrap();
/// let a = system.spawn(A);
/// a.send(DeleteMsg).unwrap();
/// system.stop();
/// let err: SendError<DeleteMsg> = a.send(DeleteMsg).unwrap_err();
/// let _message_back: DeleteMsg = err.into_inner();
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<M>(pub M);

impl<M> SendError<M> {
    /// The message that could not be delivered.
    pub fn into_inner(self) -> M {
        self.0
    }
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SendError<{}>(..)", std::any::type_name::<M>())
    }
}

impl<M> fmt::Display for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot send a `{}`: the actor has terminated (or its system has stopped); \
             the message is returned inside this error",
            std::any::type_name::<M>()
        )
    }
}

impl<M> std::error::Error for SendError<M> {}

/// How an actor ended, when it did not hand back a final value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ActorExit {
    /// A behaviour returned [`crate::Allocation::Delete`], or it was ended as Delete ends an
    /// actor: [`crate::Context::stop`], a poison pill, a linked failure, a graceful shutdown.
    Deleted,
    /// A behaviour returned [`crate::Allocation::Destroy`].
    Destroyed,
    /// A behaviour (or the `started` hook) panicked.
    Panicked,
    /// The system stopped at once (it was dropped, or a shutdown's deadline passed) while
    /// the actor was alive.
    Stopped,
}

impl fmt::Display for ActorExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActorExit::Deleted => "the actor was deleted",
            ActorExit::Destroyed => "the actor was destroyed",
            ActorExit::Panicked => "a behaviour of the actor panicked",
            ActorExit::Stopped => "the actor system shut down before the actor finished",
        })
    }
}

impl std::error::Error for ActorExit {}

/// Waits for an actor to terminate and takes its final value if it ended with
/// [`crate::Allocation::Finished`]. Made by [`crate::SystemHandle::spawn_joinable`].
pub struct JoinHandle<A: Actor> {
    cell: Arc<Cell<A>>,
}

impl<A: Actor> JoinHandle<A> {
    pub(crate) fn new(cell: Arc<Cell<A>>) -> Self {
        Self { cell }
    }

    /// Whether the actor has terminated.
    pub fn is_finished(&self) -> bool {
        self.cell.header.status() != Status::Alive
    }

    /// Blocks until the actor terminates.
    ///
    /// # Errors
    /// [`ActorExit`] when it ended any other way than `Finished`.
    ///
    /// # Panics
    /// When called on a thread that runs this system's work (inside a behaviour on one of its
    /// workers, or on the actor's own detached thread), where waiting could deadlock: the
    /// actor may need this very thread to run. (A detached actor may join *another* actor of
    /// its system: it has a thread of its own.) Also on a thread that must never block (a
    /// remote node's callback).
    pub fn join(self) -> Result<A, ActorExit> {
        let hdr = &self.cell.header;
        let life = &hdr.exec.shared().life;
        let owner = hdr.exec.shared().id();
        assert!(
            !must_not_block(),
            "`JoinHandle::join` was called on a thread that must never block (a remote node's \
             callback, on one of Zenoh's threads): join from another thread"
        );
        if runs_for(owner) {
            let me = (hdr as *const crate::core::Header).cast::<()>();
            let other_detached = detached_actor_of(owner).is_some_and(|a| a != me);
            assert!(
                other_detached,
                "`JoinHandle::join` was called from inside a behaviour of the actor's own \
                 system (or on the actor's own thread): the thread would block waiting for an \
                 actor that may need it to run (a deadlock). Join from a thread outside the \
                 system, or have the actor send its result as a message"
            );
        }
        hdr.exec
            .wait_until(&mut || hdr.status() != Status::Alive || life.aborting());
        match hdr.status() {
            // SAFETY: `Finished` was read with Acquire, and this handle (not Clone) is the only
            // taker of the final state.
            Status::Finished => unsafe { self.cell.take_finished() }.ok_or(ActorExit::Stopped),
            Status::Deleted => Err(ActorExit::Deleted),
            Status::Destroyed => Err(ActorExit::Destroyed),
            Status::Panicked => Err(ActorExit::Panicked),
            Status::Stopped | Status::Alive => Err(ActorExit::Stopped),
        }
    }
}

impl<A: Actor> Drop for JoinHandle<A> {
    /// A `Finished` actor's final state kept for this handle is dropped with it.
    fn drop(&mut self) {
        cell::handle_dropped(&self.cell);
    }
}

impl<A: Actor> fmt::Debug for JoinHandle<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("actor", &std::any::type_name::<A>())
            .finish()
    }
}
