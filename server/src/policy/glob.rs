//! Shell-style globs for tool names, commands and profile names: `*` any
//! run of characters (spaces and slashes too), `?` one character, anything
//! else itself. Matched over characters, iteratively (no backtracking
//! blow-up: a star's last position is all that is remembered).

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob(Vec<char>);

impl Glob {
    pub(crate) fn new(pattern: &str) -> Self {
        Self(pattern.chars().collect())
    }

    /// Whether the pattern has a wildcard (a plain name can be checked
    /// against the profiles that exist).
    pub(crate) fn is_literal(&self) -> bool {
        !self.0.iter().any(|c| matches!(c, '*' | '?'))
    }

    /// Whether `text` matches the whole pattern.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let p = &self.0;
        let t: Vec<char> = text.chars().collect();
        let (mut pi, mut ti) = (0, 0);
        // Where the last star was, and where in the text it started.
        let mut star: Option<(usize, usize)> = None;
        while ti < t.len() {
            match p.get(pi) {
                Some('*') => {
                    star = Some((pi, ti));
                    pi += 1;
                }
                Some('?') => {
                    pi += 1;
                    ti += 1;
                }
                Some(c) if *c == t[ti] => {
                    pi += 1;
                    ti += 1;
                }
                _ => match star {
                    // Let the last star take one more character.
                    Some((sp, st)) => {
                        pi = sp + 1;
                        ti = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        p[pi..].iter().all(|c| *c == '*')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_strings() {
        let cases = [
            ("git status*", "git status --short", true),
            ("git status*", "git statu", false),
            ("git status*", "xgit status", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("*.rs", "src/main.rs", true),
            ("*a*b*c*", "xxaxxbxxcxx", true),
            ("*a*b*c*", "xxaxxcxxbxx", false),
            ("Bash", "bash", false),
            ("ls *", "ls -la /tmp", true),
            ("é*", "été", true),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(
                Glob::new(pattern).matches(text),
                want,
                "{pattern:?} {text:?}"
            );
        }
        assert!(Glob::new("qwen").is_literal());
        assert!(!Glob::new("qwen-*").is_literal());
    }

    #[test]
    fn many_stars_stay_linear() {
        let pattern = Glob::new(&"*a".repeat(50));
        let text = "a".repeat(49) + "b";
        assert!(!pattern.matches(&text.repeat(40)));
    }
}
