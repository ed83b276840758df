//! Tests of the terminal view: streaming, the live area's layout and the
//! cursor, and erasing after the terminal rewrapped our rows.

use super::line::{styles, Line};
use super::live::prompt_rows;
use super::{Live, Ui};

fn live<'a>(input: &'a str, approval: Option<&'a str>) -> Live<'a> {
    Live {
        approval,
        status: Line::styled("idle", styles::dim()),
        input,
        cursor: input.len(),
        placeholder: "type",
    }
}

fn strip(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next_if_eq(&'[').is_some() {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn streamed_text_is_committed_row_by_row() {
    let mut ui = Ui::new(Vec::new(), 21, 10);
    ui.stream_begin();
    ui.stream_push("hello there general ");
    ui.stream_push("kenobi\nsecond");
    // usable = 20, text rows of 18 columns.
    let committed: Vec<String> = ui.pending.iter().map(Line::text).collect();
    assert_eq!(committed, ["", "✦ hello there", "  general kenobi"]);
    ui.stream_end();
    assert_eq!(
        ui.pending.last().map(Line::text).as_deref(),
        Some("  second")
    );
}

#[test]
fn the_cursor_goes_back_to_the_prompt() {
    let mut ui = Ui::new(Vec::new(), 80, 10);
    ui.flush(&live("abc", Some("Allow run_shell_command: `ls`?")))
        .unwrap();
    // Box (3 rows), blank, status, prompt: cursor on the sixth row.
    assert_eq!(ui.cursor_row, 5);
    assert_eq!(ui.cursor_col, 5);
    let screen = strip(&ui.out);
    assert!(screen.contains("Allow run_shell_command: `ls`? [y] yes  [n] no"));
    assert!(screen.contains("> abc"));
}

#[test]
fn long_input_wraps_and_tracks_the_cursor() {
    let ui = Ui::new(Vec::new(), 11, 10);
    // usable 10, 8 columns of input per row.
    let live = Live {
        cursor: 9,
        ..live("abcdefghijkl", None)
    };
    let (rows, cursor) = prompt_rows(&live, ui.usable());
    assert_eq!(rows.len(), 2);
    assert_eq!(cursor, (1, 3));
}

#[test]
fn erase_accounts_for_rewrapping_after_a_resize() {
    let mut ui = Ui::new(Vec::new(), 40, 10);
    ui.flush(&live(&"x".repeat(30), None)).unwrap();
    assert_eq!(ui.cursor_row, 2);
    ui.resize(20, 10);
    let mut buf = Vec::new();
    ui.erase(&mut buf).unwrap();
    // The blank and status rows still fit; the 32-column prompt row
    // became two.
    assert_eq!(buf, b"\r\x1b[3A\x1b[J");
}
