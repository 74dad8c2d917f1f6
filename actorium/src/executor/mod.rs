//! The executors: where behaviours run and how messages reach them. Each uses the core and the
//! runtime only, and offers itself to the layers above through [`crate::core::Executor`].
//!
//! - [`message_centric`]: the message-centric executor of the Cforall actor system
//!   (Colby Parsons, MMath thesis, Waterloo 2023): over-sharded message queues, gulping,
//!   copy-queue envelopes, queue stealing.
//! - [`mailbox`]: the per-actor mailbox protocol and the job that drains a mailbox; with it the
//!   detached executor ([`mailbox::detached`]: one thread per actor, as in CAF's scheduler
//!   manual: the C++ Actor Framework manual, section "Scheduler").
//! - [`actor_centric`]: the actor-centric executor of CAF (after CAF's scheduler manual): an actor
//!   with mail is a *job*, and a policy ([`crate::policy::Policy`]) decides where jobs wait and
//!   who runs them. It builds on [`mailbox`].
//! - [`forkjoin`]: fork/join tasks on the same workers (after Java's fork/join work stealing:
//!   Doug Lea, "A Java Fork/Join Framework", 2000): `join`, scopes, fork handles, latches and
//!   the helping rule, on the runtime's task deques.

pub(crate) mod actor_centric;
pub(crate) mod forkjoin;
pub(crate) mod mailbox;
pub(crate) mod message_centric;
