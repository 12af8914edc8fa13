//! Stable diagnostic codes. A code's spelling is a contract: reports, CI filters and
//! `tracegate explain CODE` all use it, so codes are added, never renamed.

use std::fmt;

/// What kind of finding a code names, which also decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// A trace broke a spec's rule (exit 1).
    Violation,
    /// The spec or the input could not be used as given (exit 2).
    Error,
    /// A doubtful but meaningful spec, found by `lint` (exit 0, or 1 with
    /// `--deny warnings`).
    Warning,
}

macro_rules! codes {
    ($($variant:ident => $name:literal, $category:ident, $summary:literal;)*) => {
        /// A stable kebab-case diagnostic code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(
                #[doc = concat!("`", $name, "`: ", $summary)]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in the order the reference lists them.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as users write it (`forbidden-transition`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }

            /// Whether the code is a violation, an error or a warning.
            pub fn category(self) -> Category {
                match self {
                    $(Code::$variant => Category::$category,)*
                }
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    ForbiddenTransition => "forbidden-transition", Violation,
        "an event the spec forbids in the current state";
    UnexpectedEvent => "unexpected-event", Violation,
        "an event with no transition from the current state, under `otherwise reject`";
    UnacceptedEnd => "unaccepted-end", Violation,
        "a trace ended while an instance was in a state that may not end a trace";
    MalformedRecord => "malformed-record", Error,
        "a trace line that is not a usable record";
    UnreadableInput => "unreadable-input", Error,
        "a spec or trace path that cannot be read";
    NoInput => "no-input", Error,
        "no spec files or no trace files were found";
    AmbiguousEvent => "ambiguous-event", Error,
        "a record matched two events of one spec";
    SyntaxError => "syntax-error", Error,
        "spec text that does not parse";
    BarePathCondition => "bare-path-condition", Error,
        "a path used as a condition on its own (there is no truthiness)";
    InvalidRegex => "invalid-regex", Error,
        "a regular expression that does not compile or is too large";
    UnknownState => "unknown-state", Error,
        "a state name that no transition, path or `initial` declares";
    UnknownEvent => "unknown-event", Error,
        "an event name that no `event` declares";
    DuplicateEvent => "duplicate-event", Error,
        "two `event` declarations with one name";
    DuplicateDeclaration => "duplicate-declaration", Error,
        "a statement that may appear once appears twice";
    DuplicateSpec => "duplicate-spec", Error,
        "two spec files declare the same spec name";
    MissingInitial => "missing-initial", Error,
        "a spec with no `initial` state and no `path`";
    ConflictingTransition => "conflicting-transition", Error,
        "two transitions from one state on one event lead to different states";
    AcceptAndHot => "accept-and-hot", Error,
        "a spec that uses both `accept` and `hot`";
    OverlappingEvents => "overlapping-events", Error,
        "two event patterns that claim exactly the same records";
    ToolOnNonToolPattern => "tool-on-non-tool-pattern", Error,
        "a tool name given to a `message` or `record` pattern";
    UnknownVariable => "unknown-variable", Error,
        "a `$VAR` that no event's `bind` sets";
    TypeMismatch => "type-mismatch", Error,
        "a comparison or arithmetic between values that can never be compared or combined";
    UnreachableState => "unreachable-state", Warning,
        "a state that no sequence of events leads to from the initial state";
    TrapState => "trap-state", Warning,
        "a reachable state from which no state that may end a trace can be reached";
    UnusedEvent => "unused-event", Warning,
        "an event that no transition, `path` or `forbid` uses";
    ShadowedTransition => "shadowed-transition", Warning,
        "a transition that never fires, because a `forbid` names the same state and event";
    RedundantForbid => "redundant-forbid", Warning,
        "a `forbid` whose move an earlier `forbid` already forbids, so its message is never shown";
    DuplicatePath => "duplicate-path", Warning,
        "a `path` that repeats another `path` or a prefix of one";
    OverlappingPatterns => "overlapping-patterns", Warning,
        "two event patterns that can claim the same record";
    VacuousSpec => "vacuous-spec", Warning,
        "a spec that no trace can violate";
    UnmatchedTool => "unmatched-tool", Warning,
        "a tool the traces use that no event of the linted specs mentions";
    UnseenTool => "unseen-tool", Warning,
        "a tool an event names that never occurs in the traces";
    UnknownFormat => "unknown-format", Error,
        "a trace file that holds no transcript in any format tracegate reads";
    UsageError => "usage-error", Error,
        "a command line that names something tracegate does not have or cannot do";
    MissingKey => "missing-key", Error,
        "a record of a keyed spec's event without the `per` key, which no instance could take";
    UntypedRecords => "untyped-records", Warning,
        "a trace file read as native records in which no record has a `kind` or a `tool`";
    BrokenChain => "broken-chain", Error,
        "a sealed log whose hash chain does not verify";
    UnusableTime => "unusable-time", Error,
        "a record of a joined log without an RFC 3339 `time` to order it by";
    TimeOutOfOrder => "time-out-of-order", Error,
        "a joined log whose records are not in time order";
    UnsetVariable => "unset-variable", Warning,
        "a variable read in a state that no path binding it leads to";
    ProvenanceLimit => "provenance-limit", Warning,
        "a trace showed more distinct values than its provenance index holds; later ones are not remembered";
}

impl Code {
    /// Looks a code up by its kebab-case name.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|code| code.as_str() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate code name {name}");
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{name} is not kebab-case"
            );
            assert_eq!(Code::from_name(name), Some(code));
        }
        assert_eq!(Code::from_name("no-such-code"), None);
    }
}
