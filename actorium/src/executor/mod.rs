//! The executors: where behaviours run and how messages reach them. Each uses the core and the
//! runtime only, and offers itself to the layers above through [`crate::core::Executor`].
//!
//! - [`inverted`]: the message-centric ("inverted") executor of the Cforall actor system
//!   (seed 002): over-sharded message queues, gulping, copy-queue envelopes, queue stealing.
//! - [`mailbox`]: the per-actor mailbox protocol and the job that drains a mailbox; with it the
//!   detached executor ([`mailbox::detached`]: one thread per actor, seed 000).
//! - [`centric`]: the actor-centric executor of CAF (seed 000): an actor with mail is a *job*,
//!   and a policy ([`crate::policy::Policy`]) decides where jobs wait and who runs them. It
//!   builds on [`mailbox`].
//! - [`forkjoin`]: fork/join tasks on the same workers (seed 004): `join`, scopes, fork
//!   handles, latches and the helping rule, on the runtime's task deques.

pub(crate) mod centric;
pub(crate) mod forkjoin;
pub(crate) mod inverted;
pub(crate) mod mailbox;
