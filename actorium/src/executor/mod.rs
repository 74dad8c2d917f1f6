//! Executors: where behaviours run and how messages reach them.
//!
//! - [`inverted`]: the message-centric ("inverted") executor of the Cforall actor system
//!   (seed 002): over-sharded message queues, gulping, copy-queue envelopes.

pub(crate) mod inverted;
