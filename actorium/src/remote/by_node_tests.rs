//! `ByNode` against a flat map of (node, number) as its model, under random operations.

use super::ByNode;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u8, u32),
    Remove(u8, u8),
    TakeNode(u8),
    RetainNode(u8, u32),
    TakeWhere(u32),
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    let (n, k) = (0u8..4, 0u8..6);
    prop_oneof![
        4 => (n.clone(), k.clone(), any::<u32>()).prop_map(|(n, k, v)| Op::Insert(n, k, v)),
        2 => (n.clone(), k).prop_map(|(n, k)| Op::Remove(n, k)),
        1 => n.clone().prop_map(Op::TakeNode),
        1 => (n, 1u32..4).prop_map(|(n, m)| Op::RetainNode(n, m)),
        1 => (1u32..4).prop_map(Op::TakeWhere),
        1 => Just(Op::Drain),
    ]
}

proptest! {
    #[test]
    fn by_node_matches_a_flat_map(ops in proptest::collection::vec(op(), 0..200)) {
        let mut t = ByNode::<u32>::default();
        let mut model: HashMap<(String, u64), u32> = HashMap::new();
        let name = |n: u8| -> Arc<str> { format!("node{n}").into() };
        for op in ops {
            match op {
                Op::Insert(n, k, v) => {
                    let got = t.insert(&name(n), k.into(), v);
                    prop_assert_eq!(got, model.insert((name(n).to_string(), k.into()), v));
                }
                Op::Remove(n, k) => {
                    let got = t.remove(&name(n), k.into());
                    prop_assert_eq!(got, model.remove(&(name(n).to_string(), k.into())));
                }
                Op::TakeNode(n) => {
                    let mut got: Vec<_> = t.take_node(&name(n)).into_iter().collect();
                    let mut want: Vec<_> = model
                        .iter()
                        .filter(|((m, _), _)| **m == *name(n))
                        .map(|((_, k), v)| (*k, *v))
                        .collect();
                    model.retain(|(m, _), _| **m != *name(n));
                    got.sort_unstable();
                    want.sort_unstable();
                    prop_assert_eq!(got, want);
                }
                Op::RetainNode(n, m) => {
                    t.retain_node(&name(n), |v| v % m == 0);
                    model.retain(|(o, _), v| **o != *name(n) || *v % m == 0);
                }
                Op::TakeWhere(m) => {
                    let mut got = t.take_where(|v| v % m == 0);
                    let mut want: Vec<u32> =
                        model.values().copied().filter(|v| v % m == 0).collect();
                    model.retain(|_, v| *v % m != 0);
                    got.sort_unstable();
                    want.sort_unstable();
                    prop_assert_eq!(got, want);
                }
                Op::Drain => {
                    let mut got: Vec<_> = t.drain().collect();
                    let mut want: Vec<_> = model.drain().map(|(_, v)| v).collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    prop_assert_eq!(got, want);
                }
            }
            prop_assert_eq!(t.len(), model.len());
            for ((n, k), v) in &model {
                prop_assert_eq!(t.get(n, *k), Some(v));
            }
        }
    }
}
