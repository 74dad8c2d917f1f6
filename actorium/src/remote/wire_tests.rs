//! Node ids as frames carry them: packed two digits to a byte, and back, exactly.

use super::*;
use proptest::prelude::*;

proptest! {
    /// Every id a node can have (lowercase hexadecimal, 1 to 32 digits, leading zeros kept)
    /// comes back as it was, from about half its bytes.
    #[test]
    fn a_packed_id_unpacks_to_itself(id in "[0-9a-f]{1,32}") {
        let packed = pack_id(&id).unwrap();
        prop_assert_eq!(packed.len(), 1 + id.len().div_ceil(2));
        prop_assert_eq!(packed_len(packed[0]), Some(packed.len()));
        prop_assert_eq!(&*unpack_id(&packed).unwrap(), id.as_str());
    }

    /// A node id in a name's key or a recipient in a message is taken exactly when a frame
    /// could carry it: an upper-case id, which no node has, is refused there, not at the send.
    #[test]
    fn an_id_is_valid_exactly_when_it_packs(id in "[0-9a-fA-Fg ]{0,34}") {
        prop_assert_eq!(super::super::valid_node_id(&id), pack_id(&id).is_some());
    }

    /// Any bytes: unpacked only if they are what `pack_id` makes of some id.
    #[test]
    fn only_what_pack_id_makes_unpacks(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
        if let Some(text) = unpack_id(&bytes) {
            prop_assert_eq!(pack_id(&text), Some(bytes));
        }
    }
}

#[test]
fn what_is_not_an_id_is_not_packed_nor_unpacked() {
    for bad in ["", "A1", "g", "0x1", &"1".repeat(33)] {
        assert_eq!(pack_id(bad), None, "{bad:?}");
    }
    // A digit count of 0 or above 32, a wrong length, a non-zero unused half.
    for bad in [&[0u8][..], &[33, 0x12], &[2, 0x12, 0x34], &[2], &[1, 0x11]] {
        assert!(unpack_id(bad).is_none(), "{bad:?}");
    }
    assert_eq!(&*unpack_id(&[3, 0x0a, 0xb0]).unwrap(), "0ab");
}
