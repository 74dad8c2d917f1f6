//! A table keyed by node, then by number: the asks waiting on each node, its actors this node
//! holds recipients of or watches, the local actors it watches or links to. A node's loss
//! takes its own entries whole, so its cost is what that node left here, never a scan of
//! what every node left (a peer announcing many node ids, or many nodes coming and going,
//! would otherwise cost a pass over every other node's entries each time).

use std::collections::HashMap;
use std::sync::Arc;

/// Entries by (node, number).
pub(super) struct ByNode<V> {
    nodes: HashMap<Arc<str>, HashMap<u64, V>>,
    len: usize,
}

impl<V> Default for ByNode<V> {
    fn default() -> Self {
        Self {
            nodes: HashMap::new(),
            len: 0,
        }
    }
}

impl<V> ByNode<V> {
    /// How many entries, over every node.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The entry of `node` numbered `id`.
    pub(super) fn get(&self, node: &str, id: u64) -> Option<&V> {
        self.nodes.get(node)?.get(&id)
    }

    /// Files `v` under (`node`, `id`); the entry it replaces, if any.
    pub(super) fn insert(&mut self, node: &Arc<str>, id: u64, v: V) -> Option<V> {
        let old = match self.nodes.get_mut(&**node) {
            Some(m) => m.insert(id, v),
            None => {
                self.nodes.insert(node.clone(), HashMap::from([(id, v)]));
                None
            }
        };
        self.len += usize::from(old.is_none());
        old
    }

    /// Takes the entry of `node` numbered `id`.
    pub(super) fn remove(&mut self, node: &str, id: u64) -> Option<V> {
        let m = self.nodes.get_mut(node)?;
        let v = m.remove(&id)?;
        if m.is_empty() {
            self.nodes.remove(node);
        }
        self.len -= 1;
        Some(v)
    }

    /// Takes every entry of `node`.
    pub(super) fn take_node(&mut self, node: &str) -> HashMap<u64, V> {
        let m = self.nodes.remove(node).unwrap_or_default();
        self.len -= m.len();
        m
    }

    /// Keeps the entries of `node` for which `keep` holds.
    pub(super) fn retain_node(&mut self, node: &str, mut keep: impl FnMut(&V) -> bool) {
        if let Some(m) = self.nodes.get_mut(node) {
            let before = m.len();
            m.retain(|_, v| keep(v));
            self.len -= before - m.len();
            if m.is_empty() {
                self.nodes.remove(node);
            }
        }
    }

    /// Takes the entries, of every node, for which `take` holds (for the caller to drop
    /// outside its lock: dropping one may run code that takes it).
    pub(super) fn take_where(&mut self, mut take: impl FnMut(&V) -> bool) -> Vec<V> {
        let mut taken = Vec::new();
        self.nodes.retain(|_, m| {
            let ids: Vec<u64> = m.iter().filter(|(_, v)| take(v)).map(|(k, _)| *k).collect();
            taken.extend(ids.iter().filter_map(|k| m.remove(k)));
            !m.is_empty()
        });
        self.len -= taken.len();
        taken
    }

    /// Takes every entry.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = V> {
        self.len = 0;
        std::mem::take(&mut self.nodes)
            .into_values()
            .flat_map(HashMap::into_values)
    }
}

#[cfg(test)]
#[path = "by_node_tests.rs"]
mod tests;
