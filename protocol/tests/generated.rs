//! Fails when the checked-in TypeScript types or JSON Schema drift from the
//! Rust types. `DUET_BLESS=1 cargo test -p duet-protocol` rewrites them.

use std::path::PathBuf;

use duet_protocol::generate;

fn check(rel: &str, expected: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    if std::env::var_os("DUET_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    if actual != expected {
        panic!(
            "{rel} is out of date with the Rust types in duet-protocol.\n\
             Run `DUET_BLESS=1 cargo test -p duet-protocol --test generated` and commit the result.\n\
             First difference at byte {}",
            actual
                .bytes()
                .zip(expected.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(actual.len().min(expected.len()))
        );
    }
}

#[test]
fn typescript_is_up_to_date() {
    check(generate::TS_PATH, generate::typescript());
}

#[test]
fn json_schema_is_up_to_date() {
    check(generate::SCHEMA_PATH, generate::json_schema());
}

#[test]
fn guard_tables_are_up_to_date() {
    check(generate::GUARDS_PATH, generate::guard_tables());
}
