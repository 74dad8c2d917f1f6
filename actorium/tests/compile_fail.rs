//! What must not compile, with the compiler's message (`tests/ui/`): a send of a message type
//! the actor has no behaviour for (static typing, as in the Cforall actor system: Colby
//! Parsons, MMath thesis, Waterloo 2023, "CFA Actor Syntax"; the message says what to
//! implement), and a fork handle kept past its scope's body.

#[test]
fn programs_that_must_not_compile_do_not() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
