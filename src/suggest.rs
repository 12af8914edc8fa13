//! "Did you mean …?" suggestions for misspelled names.

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn did_you_mean<'c, I>(name: &str, candidates: I) -> Option<&'c str>
where
    I: IntoIterator<Item = &'c str>,
{
    let limit = name.chars().count().div_ceil(3);
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= limit && candidate != name)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("lookup", "lokup"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggests_only_close_names() {
        let names = ["lookup", "found", "not_found"];
        assert_eq!(did_you_mean("lokup", names), Some("lookup"));
        assert_eq!(did_you_mean("fuond", names), Some("found"));
        assert_eq!(did_you_mean("zzz", names), None);
        assert_eq!(did_you_mean("found", names), None);
    }
}
