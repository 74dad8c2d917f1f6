//! A [`Recipient`] inside a message: encoded as the (node, actor) other nodes reach it at.
//! A local actor's recipient is exported by the node that sends it (it serves the recipient's
//! protocol to other nodes until it ends); decoded on its own node, it is the local
//! recipient again.

use super::node::current;
use super::wire::Protocol;
use crate::actor::Recipient;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

const OUTSIDE: &str =
    "a Recipient is encoded only inside a message to a remote actor (there is no node here)";

impl<M: Protocol> Serialize for Recipient<M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let node = current().ok_or_else(|| S::Error::custom(OUTSIDE))?;
        let (at, id) = node.address_of(self);
        (&*at, id).serialize(s)
    }
}

impl<'de, M: Protocol> Deserialize<'de> for Recipient<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (at, id): (String, u64) = Deserialize::deserialize(d)?;
        if !super::valid_node_id(&at) {
            return Err(D::Error::custom(format!("`{at}` is not a node id")));
        }
        let node = current().ok_or_else(|| D::Error::custom(OUTSIDE))?;
        Ok(node.recipient(&at, id))
    }
}
