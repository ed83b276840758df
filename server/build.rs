//! Embeds the built web UI (web/dist) into the binary: generates a table of
//! `(path, bytes, content type)` with `include_bytes!`. Without a build of
//! the UI the table is empty and duet serves a page that says how to build it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dist = std::env::var_os("DUET_WEB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../web/dist"));
    println!("cargo:rerun-if-env-changed=DUET_WEB_DIST");
    // Cargo scans a directory given here recursively for changes.
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    if dist.is_dir() {
        collect(&dist, &dist, &mut files);
    }
    files.sort();
    let mut out = String::from("/// `(url path, contents, content type)` of the embedded web UI.\npub(crate) static ASSETS: &[(&str, &[u8], &str)] = &[\n");
    for (url, path) in &files {
        let _ = writeln!(
            out,
            "    ({url:?}, include_bytes!({:?}), {:?}),",
            path.display().to_string(),
            content_type(path)
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("assets.rs");
    std::fs::write(dest, out).unwrap();
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let url = format!("/{}", rel.to_string_lossy().replace('\\', "/"));
            out.push((url, path.canonicalize().unwrap_or(path)));
        }
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "txt" => "text/plain; charset=utf-8",
        "webmanifest" => "application/manifest+json",
        _ => "application/octet-stream",
    }
}
