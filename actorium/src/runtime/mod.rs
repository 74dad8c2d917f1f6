//! The runtime under the executors: worker threads and how work is divided among them
//! ([`workers`]), idle sleep ([`idle`], seed 003), the life cycle shared by every executor
//! ([`life`]), the spinlock of the send paths ([`spin`]) and the workers' random choices
//! ([`rng`]).

pub(crate) mod idle;
pub(crate) mod life;
pub(crate) mod rng;
pub(crate) mod spin;
pub(crate) mod workers;
