//! A small line diff (longest common subsequence), enough to show an edit
//! as `-`/`+` lines with a little context.

/// One line of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// In both texts.
    Same(&'a str),
    /// Only in the old text.
    Removed(&'a str),
    /// Only in the new text.
    Added(&'a str),
}

/// Above this many cells the middle part is shown as a whole replacement
/// rather than diffed (the table is `old_lines * new_lines`).
const MAX_CELLS: usize = 1_000_000;

/// The lines of `old` and `new`, diffed. `None` for `old` means a new file:
/// every line is added.
pub fn lines<'a>(old: Option<&'a str>, new: &'a str) -> Vec<Line<'a>> {
    let a: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut out: Vec<Line<'a>> = a[..prefix].iter().map(|l| Line::Same(l)).collect();
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        out.extend(ma.iter().map(|l| Line::Removed(l)));
        out.extend(mb.iter().map(|l| Line::Added(l)));
    } else {
        // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
        let (n, m) = (ma.len(), mb.len());
        let mut lcs = vec![0usize; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if ma[i] == mb[j] {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                out.push(Line::Same(ma[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                out.push(Line::Removed(ma[i]));
                i += 1;
            } else {
                out.push(Line::Added(mb[j]));
                j += 1;
            }
        }
    }
    out.extend(a[a.len() - suffix..].iter().map(|l| Line::Same(l)));
    out
}

/// The diff with unchanged lines more than `context` lines away from a
/// change left out; `None` marks where lines were left out.
pub fn hunks<'a>(diff: &[Line<'a>], context: usize) -> Vec<Option<Line<'a>>> {
    let changed: Vec<usize> = diff
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Line::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let near = |i: usize| {
        changed
            .iter()
            .any(|&c| i + context >= c && i <= c + context)
    };
    let mut out = Vec::new();
    let mut skipped = false;
    for (i, line) in diff.iter().enumerate() {
        if matches!(line, Line::Same(_)) && !near(i) {
            skipped = true;
            continue;
        }
        if skipped {
            out.push(None);
            skipped = false;
        }
        out.push(Some(*line));
    }
    if skipped {
        out.push(None);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_all_added() {
        assert_eq!(lines(None, "a\nb\n"), [Line::Added("a"), Line::Added("b")]);
    }

    #[test]
    fn a_changed_line_is_removed_then_added_with_context() {
        let d = lines(Some("a\nb\nc\n"), "a\nB\nc\n");
        assert_eq!(
            d,
            [
                Line::Same("a"),
                Line::Removed("b"),
                Line::Added("B"),
                Line::Same("c")
            ]
        );
    }

    #[test]
    fn insertions_in_the_middle_keep_common_lines() {
        let d = lines(Some("1\n2\n3\n4\n"), "1\n2\nx\n3\n4\n");
        assert_eq!(d.iter().filter(|l| matches!(l, Line::Same(_))).count(), 4);
        assert_eq!(d[2], Line::Added("x"));
    }

    #[test]
    fn hunks_leave_out_far_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n";
        let new = "1\n2\n3\n4\n5\n6\nseven\n";
        let d = lines(Some(old), new);
        let h = hunks(&d, 1);
        assert_eq!(h[0], None);
        assert_eq!(h[1], Some(Line::Same("6")));
        assert_eq!(h.len(), 4);
    }
}
