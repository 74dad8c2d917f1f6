//! The runtime under the executors: worker threads and how work is divided among them
//! ([`workers`]), and idle sleep ([`idle`], seed 003).

pub(crate) mod idle;
pub(crate) mod workers;
