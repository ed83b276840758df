//! Property-based fuzzing of every parser of untrusted input (proptest, on
//! stable Rust). The default test run gives each property a short pass
//! (256 cases); `DUET_FUZZ_CASES=1000000` runs the long one (see the
//! README's "Fuzzing" section). A failure found here becomes a named
//! regression test next to it, so it is checked on every run.

mod client;
mod config;
mod hooks;
mod input;
mod screen;
mod sidecar;
mod skim;
mod xterm;
mod xterm_node;

use proptest::test_runner::Config;

/// Cases per property: `DUET_FUZZ_CASES`, or a short pass.
pub(crate) fn cases() -> u32 {
    std::env::var("DUET_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// The proptest config every property uses: no regression files written
/// into the tree (found cases are kept as named tests instead).
pub(crate) fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

/// Arbitrary JSON values, nested a few levels, with the keys and strings
/// the parsers care about showing up often.
pub(crate) fn json_value(
    keys: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(keys), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A key: mostly one the parser knows, sometimes anything.
pub(crate) fn key(
    keys: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        3 => prop::sample::select(keys).prop_map(str::to_string),
        1 => string(),
    ]
}

/// Strings: short, with control characters, quotes, newlines and
/// multi-byte characters more often than uniform chars would give them.
pub(crate) fn string() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        2 => "[a-z_]{0,8}",
        1 => "[\\x00-\\x1f\"\\\\\n\r\t{}\\[\\]:,é€😀\u{2028}\u{feff}]{0,8}",
        1 => any::<String>(),
    ]
}
