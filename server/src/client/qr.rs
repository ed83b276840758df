//! A QR code of a URL drawn with Unicode half blocks, for a phone's camera:
//! two rows of modules per line of text, black on white whatever the
//! terminal's theme (a dark theme would otherwise invert it, which not
//! every scanner reads), with the quiet zone the standard asks for.

use qrcode::{Color, QrCode};

/// Modules of white border around the code.
const QUIET: usize = 2;

/// The lines that draw `text` as a QR code (each ends in a colour reset),
/// or `None` if it is too long for one.
pub(crate) fn lines(text: &str) -> Option<Vec<String>> {
    let code = QrCode::new(text.as_bytes()).ok()?;
    let width = code.width();
    let colors = code.to_colors();
    let size = width + 2 * QUIET;
    let dark = |x: usize, y: usize| -> bool {
        x >= QUIET
            && y >= QUIET
            && x < QUIET + width
            && y < QUIET + width
            && colors[(y - QUIET) * width + (x - QUIET)] == Color::Dark
    };
    let mut out = Vec::new();
    for y in (0..size).step_by(2) {
        let mut line = String::new();
        for x in 0..size {
            // The upper half in the foreground colour, the lower in the
            // background: black (30/40) or bright white (97/107).
            let fg = if dark(x, y) { 30 } else { 97 };
            let bg = if y + 1 < size && dark(x, y + 1) {
                40
            } else {
                107
            };
            line.push_str(&format!("\x1b[{fg};{bg}m\u{2580}"));
        }
        line.push_str("\x1b[m");
        out.push(line);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_becomes_a_square_of_half_blocks() {
        let url = "http://192.0.2.7:8080/?token=0123456789abcdef#/session/aaaaaaaa-0000-4000-8000-000000000001";
        let drawn = lines(url).unwrap();
        let width = QrCode::new(url.as_bytes()).unwrap().width() + 2 * QUIET;
        assert_eq!(drawn.len(), width.div_ceil(2));
        for l in &drawn {
            assert_eq!(l.matches('\u{2580}').count(), width);
            assert!(l.ends_with("\x1b[m"));
        }
        assert!(lines("x".repeat(8000).as_str()).is_none());
    }
}
