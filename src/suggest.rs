//! "Did you mean …?" suggestions for misspelled names: the one rule every part of
//! tracegate uses, for spec keywords, state and event names, tool names and CLI values.
//!
//! The rule: compare without regard to case, count swapping two neighbouring characters
//! as one edit (the commonest typo), and allow one edit per three characters typed,
//! rounded up. The closest candidate wins; ties go to the alphabetically first, so the
//! answer does not depend on the order the candidates come in.

/// The candidate closest to `name`, if it is close enough to be a likely typo. A
/// candidate spelt exactly like `name` is not a suggestion; one that differs only in
/// case is the best there is.
pub fn did_you_mean<'c, I>(name: &str, candidates: I) -> Option<&'c str>
where
    I: IntoIterator<Item = &'c str>,
{
    let limit = name.chars().count().div_ceil(3);
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .filter(|&candidate| candidate != name)
        .map(|candidate| (edit_distance(&lower, &candidate.to_lowercase()), candidate))
        .filter(|&(distance, _)| distance <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, candidate)| candidate)
}

/// The hint "did you mean `x`?" for a misspelled `name`, if a candidate is close enough.
pub fn did_you_mean_hint<'c, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'c str>,
{
    did_you_mean(name, candidates).map(|close| format!("did you mean `{close}`?"))
}

/// The number of single-character edits between `a` and `b`: insert, delete,
/// substitute, or swap two neighbours (optimal string alignment distance).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the table suffice: a swap looks two rows back.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut above: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (above[j] + 1).min(row[j - 1] + 1).min(above[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            row[j] = best;
        }
        std::mem::swap(&mut before, &mut above);
        std::mem::swap(&mut above, &mut row);
    }
    above[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("lookup", "lokup"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("evnt", "event"), 1);
        // A swap of neighbours is one edit, not two.
        assert_eq!(edit_distance("initail", "initial"), 1);
        assert_eq!(edit_distance("fuond", "found"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn suggests_only_close_names() {
        let names = ["lookup", "found", "not_found"];
        assert_eq!(did_you_mean("lokup", names), Some("lookup"));
        assert_eq!(did_you_mean("fuond", names), Some("found"));
        assert_eq!(did_you_mean("zzz", names), None);
        assert_eq!(did_you_mean("found", names), None);
    }

    #[test]
    fn case_is_not_a_difference() {
        let keywords = ["reject", "ignore"];
        assert_eq!(did_you_mean("Reject", keywords), Some("reject"));
        assert_eq!(did_you_mean("IGNORE", keywords), Some("ignore"));
        // Exactly the same spelling is no suggestion, even among names that differ in case.
        assert_eq!(did_you_mean("Done", ["Done", "done"]), Some("done"));
    }

    #[test]
    fn ties_go_to_the_alphabetically_first() {
        assert_eq!(did_you_mean("cat", ["cut", "bat"]), Some("bat"));
        assert_eq!(did_you_mean("cat", ["bat", "cut"]), Some("bat"));
    }

    #[test]
    fn hint_names_the_candidate() {
        assert_eq!(
            did_you_mean_hint("forbit", ["forbid", "per"]).as_deref(),
            Some("did you mean `forbid`?")
        );
        assert_eq!(did_you_mean_hint("zzz", ["forbid"]), None);
    }
}
