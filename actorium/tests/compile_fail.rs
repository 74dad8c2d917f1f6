//! Static typing (seed 002, "CFA Actor Syntax"): a send of a message type the actor has no
//! behaviour for is rejected at compile time, with a message that says what to implement.

#[test]
fn sending_an_unhandled_message_type_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
