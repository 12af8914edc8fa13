//! The long explanation of every diagnostic code, as `tracegate explain CODE` prints it.
//!
//! Each text has three sections, in the ruff style: what the code means, why it matters,
//! and a minimal example (a spec and/or trace lines that trigger it, and the fix).
//! The example opens its section, indented four spaces, and must be complete:
//! `tests/explain_examples.rs` runs it and expects exactly the code it explains.

use super::Code;

/// The long explanation of `code`: markdown-ish plain text with the headings
/// `## What it means`, `## Why it matters` and `## Example`.
pub fn explain(code: Code) -> &'static str {
    match code {
        Code::ForbiddenTransition => FORBIDDEN_TRANSITION,
        Code::UnexpectedEvent => UNEXPECTED_EVENT,
        Code::UnacceptedEnd => UNACCEPTED_END,
        Code::MalformedRecord => MALFORMED_RECORD,
        Code::UnreadableInput => UNREADABLE_INPUT,
        Code::NoInput => NO_INPUT,
        Code::AmbiguousEvent => AMBIGUOUS_EVENT,
        Code::SyntaxError => SYNTAX_ERROR,
        Code::BarePathCondition => BARE_PATH_CONDITION,
        Code::InvalidRegex => INVALID_REGEX,
        Code::UnknownState => UNKNOWN_STATE,
        Code::UnknownEvent => UNKNOWN_EVENT,
        Code::DuplicateEvent => DUPLICATE_EVENT,
        Code::DuplicateDeclaration => DUPLICATE_DECLARATION,
        Code::DuplicateSpec => DUPLICATE_SPEC,
        Code::MissingInitial => MISSING_INITIAL,
        Code::ConflictingTransition => CONFLICTING_TRANSITION,
        Code::AcceptAndHot => ACCEPT_AND_HOT,
        Code::OverlappingEvents => OVERLAPPING_EVENTS,
        Code::ToolOnNonToolPattern => TOOL_ON_NON_TOOL_PATTERN,
        Code::UnreachableState => UNREACHABLE_STATE,
        Code::TrapState => TRAP_STATE,
        Code::UnusedEvent => UNUSED_EVENT,
        Code::ShadowedTransition => SHADOWED_TRANSITION,
        Code::RedundantForbid => REDUNDANT_FORBID,
        Code::DuplicatePath => DUPLICATE_PATH,
        Code::OverlappingPatterns => OVERLAPPING_PATTERNS,
        Code::VacuousSpec => VACUOUS_SPEC,
        Code::UnmatchedTool => UNMATCHED_TOOL,
        Code::UnseenTool => UNSEEN_TOOL,
        Code::UnknownFormat => UNKNOWN_FORMAT,
        Code::UsageError => USAGE_ERROR,
        Code::UntypedRecords => UNTYPED_RECORDS,
        Code::BrokenChain => BROKEN_CHAIN,
        Code::UnusableTime => UNUSABLE_TIME,
        Code::TimeOutOfOrder => TIME_OUT_OF_ORDER,
        Code::MissingKey => MISSING_KEY,
        Code::UnknownVariable => UNKNOWN_VARIABLE,
        Code::TypeMismatch => TYPE_MISMATCH,
        Code::UnsetVariable => UNSET_VARIABLE,
        Code::ProvenanceLimit => PROVENANCE_LIMIT,
    }
}

const FORBIDDEN_TRANSITION: &str = r##"## What it means
A record matched an event that a `forbid` rule names for the instance's current state.
Forbid overrides allow: the move is a violation even if a transition on that event exists.
The report gives the rule's message, the trace line, the state, the event and the path
that led there. The instance then stops: it reports once.

## Why it matters
Forbid rules name the moves a recovery protocol exists to prevent: a blind re-create after
an unknown outcome, a retry after an authorization denial or after a human said no. Each
can duplicate a write or override someone's decision.

## Example
    event create  = call create_record
    event unknown = result create_record where error.category == "outcome_unknown"
    initial idle
    idle    -> pending on create
    pending -> doubt   on unknown
    forbid doubt on create: "blind re-create: look it up by request id first"

    {"kind":"call","tool":"create_record","call_id":"c1","args":{"request_id":"r-1"}}
    {"kind":"result","tool":"create_record","call_id":"c1","status":"error","error":{"category":"outcome_unknown"}}
    {"kind":"call","tool":"create_record","call_id":"c2","args":{"request_id":"r-2"}}

The third line violates the rule. Fix the agent: look the first write up by its request
id, and create again only if it is not there.
"##;

const UNEXPECTED_EVENT: &str = r##"## What it means
A record matched one of the spec's events, but the current state has no transition on
that event and no `forbid` names it, and the spec says `otherwise reject` (the default).
The report lists the events that were allowed from that state. The instance then stops.

## Why it matters
A strict spec describes the whole protocol; a move outside it is a path nobody reviewed,
such as a note attached to a record the agent guessed exists. Specs that only care
about a few moves should say `otherwise ignore`, so other events pass silently.

## Example
    event create  = call create_invoice
    event unknown = result create_invoice where error.category == "outcome_unknown"
    event note    = call attach_invoice_note
    initial idle
    idle    -> pending on create
    pending -> doubt   on unknown

    {"kind":"call","tool":"create_invoice","call_id":"c1"}
    {"kind":"result","tool":"create_invoice","call_id":"c1","status":"error","error":{"category":"outcome_unknown"}}
    {"kind":"call","tool":"attach_invoice_note","call_id":"c2"}

The third line is rejected: no transition from `doubt` takes `note`. Fix the agent (look
the invoice up first), or, if the move is legitimate, add `doubt -> noted on note`.
"##;

const UNACCEPTED_END: &str = r##"## What it means
A trace ended while an instance was in a state that may not end a trace: one missing from
`accept`, or one listed in `hot`. The violation is located at the instance's last event.
Calls that never got a result were first given a synthetic result with
`status: "missing"`, so a reply that never came can leave an instance in such a state.

## Why it matters
It is the "outcome never reconciled" case: a write whose outcome is unknown, and the agent
stopped (or claimed success) without finding out whether it happened.

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    event unknown = result create_record where status == "missing"
    initial idle
    accept idle, done
    idle    -> pending on create
    pending -> done    on created
    pending -> doubt   on unknown

    {"kind":"call","tool":"create_record","call_id":"c1","args":{"request_id":"r-1"}}
    {"kind":"message","role":"assistant","text":"Done, the record is created."}

The call never got a reply, so the trace ends in `doubt`. Fix the agent: reconcile (look
the write up) before finishing; or, if stopping there is acceptable, add it to `accept`.
"##;

const MALFORMED_RECORD: &str = r##"## What it means
A trace line (or an item inside one) could not be made into a normalized record: it is
not valid JSON or not valid UTF-8, it is not a JSON object, it nests arrays and objects
deeper than 127 levels, it holds what no guard or key could read (a number beyond the
range of a double, `1e400`; a string escaping half of a UTF-16 surrogate pair alone,
`"\ud800"`), or a canonical field has the wrong type: `kind` other than "call",
"result" or "message"; `status` other than "ok", "error", "invalid" or "missing"; `tool`,
`role` or `text` not a string; `call_id` neither a string nor an integer.

## Why it matters
A record that cannot be read cannot be checked, and skipping it silently could hide the
very call a spec forbids. It is an error (exit status 2); the rest of the input is still
checked, so one bad line does not hide the others.

## Example
    {"kind":"call","tool":5,"call_id":"c1","args":{"request_id":"r-1"}}

reports: field `tool` is a number `5`, expected a string. Fix the recorder or exporter
to write `"tool":"create_record"`. `tracegate convert FILE` prints the normalized records
exactly as the specs see them.
"##;

const UNREADABLE_INPUT: &str = r##"## What it means
A spec or trace path given on the command line, or found while walking a directory,
could not be read: it does not exist, permission is denied, or reading failed part way.

## Why it matters
tracegate fails closed: a spec it cannot read is a rule it cannot enforce, and a trace it
cannot read is a run nobody checked. Either would make a green CI result meaningless, so
it is an error (exit status 2), not a warning.

## Example
    tracegate check specs/ --traces runs/2024-11-07.jsonl

when `runs/2024-11-07.jsonl` does not exist (a typo, or a CI step that did not produce
it). Fix the path, or make the step that records the transcripts run before the check.
"##;

const NO_INPUT: &str = r##"## What it means
The paths were readable, but there was nothing to check: no `*.tg` file among the spec
paths, or no trace file among the trace paths (directories are walked for both), or a
trace file or stream that holds nothing (empty, blank, a pipe closed unwritten).

## Why it matters
Checking zero traces against zero specs always "passes". An empty directory usually
means a mis-wired CI job (artifacts not downloaded, a wrong working directory), and
reporting success there would hide it; so it is an error (exit status 2).

## Example
    tracegate check specs/ --traces traces/

when `traces/` exists but the job that records transcripts wrote nothing into it.
Fix the pipeline so the traces are there, or point `--traces` at the directory that
holds them.
"##;

const AMBIGUOUS_EVENT: &str = r##"## What it means
One record matched two or more events of the same spec. A spec's events must be mutually
exclusive: one record is at most one event. The record's line and the events it matched
are reported as an error (exit status 2): tracegate does not guess which one was meant.

## Why it matters
Which transition should fire would depend on declaration order, so the verdict would be
arbitrary. Ambiguity usually means a pattern is broader than its author meant.

## Example
    event failed = result "*" where status == "error"
    event denied = result delete_repository where error.status == 403
    initial idle

    {"kind":"result","tool":"delete_repository","call_id":"c1","status":"error","error":{"status":403}}

matches both. Fix: make the patterns exclusive, for example
`event failed = result "*" where status == "error" and error.status != 403`
(a missing `error.status` is `!=` every value, so other errors still match `failed`).
"##;

const SYNTAX_ERROR: &str = r##"## What it means
The spec text does not parse. Statements are one per line; a line that begins with
whitespace continues the previous statement; `#` starts a comment. The error points at
the first token that does not fit, and says what was expected there.

## Why it matters
Errors in a spec are fatal: a spec that is only partly understood would check only part
of what its author meant, so tracegate fails closed (exit status 2).

## Example
    event created = result create_record
    where status == "ok"

The second line starts in column 0, so it is a new statement that begins with `where`.
Fix: indent the continuation line.

    event created = result create_record
        where status == "ok"

Likewise `idle -> pending create` is missing its `on`: write `idle -> pending on create`.
"##;

const BARE_PATH_CONDITION: &str = r##"## What it means
A path was used as a condition on its own, as in `where output.id`. The language has no
truthiness: every condition is an explicit test.

## Why it matters
"Truthy" is exactly where agent tooling goes wrong: an `output` of `0`, `false`, `""`,
`[]` or `null` is still a returned value, and a key set to `null` is not a missing key.
An explicit test says which of these the author meant.

## Example
    event found = result lookup_by_request_id where output.id

Fix, depending on the intent: `where has output.id` (the key is present, even if
null), or `where output.id is string` (present and a string).

A missing path is distinct from every value, `null` included: `==` on it is false and
`!=` is true, so `output.id != null` does not test presence; `has output.id` does.
"##;

const INVALID_REGEX: &str = r##"## What it means
A regular expression in a tool pattern (`call /^create_/`) or in `matches /.../` does not
compile, or compiles to a program larger than the limit. Regexes are linear-time: there
are no look-arounds and no back-references.

## Why it matters
A pattern that cannot be compiled cannot match anything, so the rule would silently never
fire. Linear-time matching keeps checking fast on huge traces and immune to
catastrophic backtracking, whatever the records contain.

## Example
    event write = call /^(?!get_|list_)/
    initial idle

Look-ahead is not supported. Fix: say the same thing with `not`:

    event write = call "*" where not (tool matches /^(get|list)_/)

and for an unbalanced group such as `/^(create|update_/`, close the parenthesis.
"##;

const UNKNOWN_STATE: &str = r##"## What it means
A state is named (in `accept`, `hot` or `forbid`) that no transition, `path`, `initial` or
`state` declares; or a name close to another state's is dead where it stands (`initial
idel`, `pendng -> done`), so it reads as a misspelling. States come into being by
appearing in a transition, as `initial`, in `state NAME, ...`, or as a position of a
`path`. A declared state is never taken for a typo, and once a spec declares states, an
undeclared one close to a declared name is reported wherever it appears.

## Why it matters
Usually a typo, and a costly one: a `forbid` on a state that does not exist forbids
nothing, and an `accept` list with a misspelt state rejects traces that should pass.

## Example
    event create          = call create_record
    event outcome_unknown = result create_record where status == "missing"
    initial idle
    idle    -> pending on create
    pending -> unknown on outcome_unknown
    forbid unkown on create: "blind re-create"

Fix the spelling: `forbid unknown on create: "blind re-create"`.
"##;

const UNKNOWN_VARIABLE: &str = r##"## What it means
A guard or a `bind` reads `$NAME`, and no event of the spec binds `NAME`
(`event E = PATTERN bind NAME = VALUE`).

## Why it matters
A variable nobody sets is always unset, so every comparison with it acts as on a missing
path: the rule it belongs to can never do what it says. It is almost always a typo.

## Example
    event create  = call create_record bind rid = args.request_id
    event created = result create_record where output.request_id == $ird
    initial idle
    idle    -> pending on create
    pending -> done    on created

Fix: read the variable that is bound: `$rid`.
"##;

const TYPE_MISMATCH: &str = r##"## What it means
A comparison or an arithmetic operation joins values whose types are known before any
record is read, and no record can make it valid: a duration compared with a string or a
number, arithmetic on a string, a boolean or `null`, a computed number compared with a
string; or `in [..]`, `matches` or `is` tests a variable that every `bind` of it gives a
value of another type (`$d is number` when `$d` is always a duration).

## Why it matters
tracegate never coerces: such a test would be false on every record, so the rule it
guards could never fire (or, under `not`, always would). That is a mistake in the spec.

## Example
    event call = call fetch where args.timeout == 30s + "1"
    initial idle
    idle -> idle on call

Fix: compare like with like: `args.timeout * 1s == 30s`.
"##;

const UNSET_VARIABLE: &str = r##"## What it means
An event's guard or `bind` reads `$NAME` in a state that the instance can reach without
any event having bound `NAME` on the way. Found by `tracegate lint`.

## Why it matters
There the variable is unset, so the guard acts as on a missing path (`==` false, `!=`
true): the rule usually does not say what its author meant. `has $NAME` asks whether it
is set, and is never reported.

## Example
    event create = call create_record where args.request_id != $rid
    event done   = result create_record bind rid = args.request_id
    initial idle
    idle    -> pending on create
    pending -> done    on done
    done    -> pending on create

In `idle` no create has been seen, so `$rid` is unset and the first create matches only
because `!=` holds on a missing value. Fix: bind the variable on an earlier move, or say
what the first time means with `has $rid` (`not has $rid or args.request_id != $rid`).
"##;

const UNKNOWN_EVENT: &str = r##"## What it means
A transition, `forbid` or `path` names an event that no `event NAME = PATTERN` declares.

## Why it matters
An undeclared event can never occur, so the transition or rule would be dead. It is
almost always a typo or a forgotten declaration, and tracegate fails closed rather than
check a spec that silently lost a rule.

## Example
    event create = call create_record
    initial idle
    idle -> pending on craete

Fix the name (`idle -> pending on create`), or declare the event:

    event craete = call create_record
"##;

const DUPLICATE_EVENT: &str = r##"## What it means
Two `event` declarations use the same name. The report points at both.

## Why it matters
Transitions refer to events by name, so with two definitions it is unclear which records
a rule talks about. Combining them by accident would also change what the event matches.

## Example
    event failed = result create_record where status == "error"
    event failed = result create_record where status == "missing"
    initial idle

Fix: give each its own name, or make it one event with `or`:

    event failed = result create_record
        where status == "error" or status == "missing"
"##;

const DUPLICATE_DECLARATION: &str = r##"## What it means
A statement that may appear only once in a spec appears twice, for example two `spec`,
`about`, `initial` or `otherwise` lines. The report points at both.

## Why it matters
The second would silently replace the first, and a machine with two initial states or
two different `otherwise` policies has no single meaning. The analyzer refuses to pick.

## Example
    event create = call create_record
    initial idle
    idle -> pending on create
    initial pending

Fix: keep one `initial` (a spec has exactly one initial state):

    initial idle
    idle -> pending on create
"##;

const DUPLICATE_SPEC: &str = r##"## What it means
Two spec files declare the same name with `spec NAME`. The report names both files.

## Why it matters
Reports, CI filters and coverage identify a spec by its name; two specs with one name
would merge their findings and make it impossible to tell which rule a violation broke.

## Example
    # specs/reconcile_before_retry.tg
    spec reconcile_before_retry
    initial idle

    # specs/reconcile_invoices.tg
    spec reconcile_before_retry
    initial idle

Fix: give each spec its own name. The convention is that the name is the file's stem:

    # specs/reconcile_invoices.tg
    spec reconcile_invoices
"##;

const MISSING_INITIAL: &str = r##"## What it means
The spec has no `initial STATE` and no `path`, so there is no state for an instance to
start in.

## Why it matters
Every instance starts in the initial state; without one the spec cannot check anything.
(`path E1 -> E2 ...` creates the initial state `start` when no `initial` is declared.)

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    idle    -> pending on create
    pending -> idle    on created

Fix: declare where instances start:

    initial idle
"##;

const CONFLICTING_TRANSITION: &str = r##"## What it means
Two transitions leave the same state on the same event but lead to different states. The
report points at both.

## Why it matters
The machine must be deterministic: one state and one event give one next state.
Otherwise the verdict would depend on which transition was picked.

## Example
    event create = call create_record
    initial idle
    idle -> pending on create
    idle -> done    on create

Fix: if the two cases really differ, tell them apart in the events, for example
by their arguments:

    event create      = call create_record where args.dry_run != true
    event create_test = call create_record where args.dry_run == true
    idle -> pending on create
    idle -> done    on create_test
"##;

const ACCEPT_AND_HOT: &str = r##"## What it means
The spec uses both `accept` (the states a trace may end in) and `hot` (the states it may
not end in). Use one or the other.

## Why it matters
The two lists answer the same question from opposite sides; with both, a state in
neither list (or in both) has no clear meaning at the end of a trace.

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    initial idle
    idle    -> unknown on create
    unknown -> done    on created
    accept idle, done
    hot unknown

Fix: keep the list that is shorter to state. `accept idle, done` already makes every
other state, `unknown` included, a state that may not end a trace; or say only
`hot unknown` to let every other state end one.
"##;

const OVERLAPPING_EVENTS: &str = r##"## What it means
Two event patterns claim exactly the same records, for example the same kind and tool
with no guard, or with identical guards.

## Why it matters
Every record that matches one matches the other, so each of them would be an
`ambiguous-event` error at run time. The spec is rejected up front instead.

## Example
    event create = call create_record
    event retry  = call create_record
    initial idle

A retry is not a different record; it is the same event in a different state. Fix:
keep one event and let the states tell them apart:

    event create = call create_record
    idle    -> pending on create
    forbid unknown on create: "blind re-create"
"##;

const TOOL_ON_NON_TOOL_PATTERN: &str = r##"## What it means
A tool name (or glob or regex) was given to a `message` or `record` pattern. Only `call`
and `result` patterns take a tool.

## Why it matters
Messages (user and assistant text) have no tool, and `record` means any record whatever
its kind, so the tool would either match nothing or be silently ignored. Both would make
the event mean something other than what was written.

## Example
    event refused = message request_approval where text matches /denied/
    initial idle

Fix: match the tool's result, or match the message without a tool:

    event refused = result request_approval where output.approved == false
    event refusal = message where role == "user" and text matches /^no\b/i
"##;

const UNREACHABLE_STATE: &str = r##"## What it means
No sequence of events leads from the initial state to this state: every transition into
it starts in a state that is itself unreachable, or there is none. (A transition that a
`forbid` overrides does not count: it never fires.) Found by `tracegate lint`.

## Why it matters
Rules about an unreachable state never apply, so the protocol they describe is not
checked. Usually a transition into the state is missing or names the wrong state.

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    initial idle
    idle    -> pending on create
    pending -> idle    on created
    orphan  -> idle    on created

Nothing moves into `orphan`. Fix: add the transition that leads there (for example
`pending -> orphan on failed`), or remove the state's transitions.
"##;

const TRAP_STATE: &str = r##"## What it means
The state is reachable, but no state that may end a trace (see `accept` and `hot`) can be
reached from it. A trace that enters it ends in `unaccepted-end`, whatever the agent does
next. Found by `tracegate lint`.

## Why it matters
Sometimes that is the intent (a state only a human can clear), but usually the way back
is missing: a recovery step the spec forgot, so every trace through the state fails.

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    event failed  = result create_record where status == "error"
    initial idle
    accept idle, done
    idle    -> pending on create
    pending -> done    on created
    pending -> broken  on failed

`broken` has no way out. Fix: add the recovery (`broken -> idle on not_found`), or
list `broken` in `accept` if ending there is fine.
"##;

const UNUSED_EVENT: &str = r##"## What it means
An event is declared, but no transition, `path` or `forbid` names it. Found by
`tracegate lint`.

## Why it matters
Records that match the event are still claimed by it: under `otherwise reject` each one
is an `unexpected-event`, and under `otherwise ignore` it silently does nothing. Either
way the declaration has no rule behind it; often a transition is missing or names a
misspelt event that happens to be declared too.

## Example
    event create  = call create_record
    event created = result create_record where status == "ok"
    event lookup  = call lookup_by_request_id
    initial idle
    idle    -> pending on create
    pending -> idle    on created

Fix: use `lookup` in a transition (`pending -> checking on lookup`), or remove it.
"##;

const SHADOWED_TRANSITION: &str = r##"## What it means
A transition (or a step of a `path`) leaves a state on an event that a `forbid` also
names for that state. Forbid overrides allow, so the transition never fires. Found by
`tracegate lint`.

## Why it matters
The spec says two contradictory things about one move. A reader of the transition
believes the move is allowed; the checker reports it as forbidden.

## Example
    event create  = call create_record
    event unknown = result create_record where status == "missing"
    initial idle
    idle    -> pending on create
    pending -> doubt   on unknown
    doubt   -> pending on create
    forbid doubt on create: "blind re-create"

Fix: decide. Remove `doubt -> pending on create` if the move is forbidden, or narrow
the `forbid` if it is not.
"##;

const REDUNDANT_FORBID: &str = r##"## What it means
A `forbid` names a state and event that an earlier `forbid` already names. The first
rule that names a move is the one reported, so this rule's message is never shown for
that move. Found by `tracegate lint`.

## Why it matters
The author wrote a message for the move that reviewers will never read; which rule
wins depends on the order of the lines.

## Example
    event create  = call create_record
    event unknown = result create_record where status == "missing"
    initial idle
    idle    -> pending on create
    pending -> doubt   on unknown
    forbid doubt on create: "blind re-create: look it up first"
    forbid doubt, pending on create: "no second create while one is open"

`doubt` on `create` is already forbidden by the first rule. Fix: drop `doubt` from
the second rule (`forbid pending on create: ...`), or merge the two messages.
"##;

const DUPLICATE_PATH: &str = r##"## What it means
A `path` repeats another `path`, or is a prefix of one. Paths from the same start share
states by name, so it adds no state and no transition. Found by `tracegate lint`.

## Why it matters
It is dead text: deleting it changes nothing, and editing it (say, to add a step) may
not do what the author expects, because the longer path still allows the old moves.

## Example
    event create  = call create_record
    event unknown = result create_record where status == "missing"
    event lookup  = call lookup_by_request_id
    path create -> unknown -> lookup
    path create -> unknown

The second line is a prefix of the first. Fix: delete it.
"##;

const OVERLAPPING_PATTERNS: &str = r##"## What it means
Two event patterns can claim the same record: their kinds and tools overlap and their
conditions can both hold. `lint` decides this statically where the patterns allow it
(names, globs, regexes, literal comparisons) and shows a record that matches both.

## Why it matters
Such a record is an `ambiguous-event` error when it shows up in a trace, since a record
may be at most one event. Specs are usually written from the happy cases, so the
overlap often hides until a rare failure arrives in production.

## Example
    event failed = result "*" where status == "error"
    event denied = result delete_repository where error.status == 403
    initial working
    working -> stopped on failed, denied

Both claim `{"kind":"result","tool":"delete_repository","error":{"status":403},"status":"error"}`.
Fix: make them exclusive, for example
`event failed = result "*" where status == "error" and error.status != 403`.
"##;

const VACUOUS_SPEC: &str = r##"## What it means
No trace can violate the spec: it has no `forbid`, it says `otherwise ignore`, and every
state may end a trace. Found by `tracegate lint`.

## Why it matters
A spec that always passes gives a green check that means nothing. It is usually half
written: the moves the protocol exists to prevent were never forbidden.

## Example
    event denied = result "*" where status == "error" and error.status == 403
    event asked  = call request_access
    initial working
    otherwise ignore
    working -> denied  on denied
    denied  -> working on asked

Fix: forbid what the protocol prevents (`forbid denied on write: "..."`), end the spec
with `accept` or `hot`, or say `otherwise reject` so moves outside it are reported.
"##;

const UNMATCHED_TOOL: &str = r##"## What it means
With `tracegate lint --traces`: a tool that the traces call is not mentioned by any event
of the linted specs (a name, or a glob or regex other than one that matches everything).
The report shows where it first occurs and, if one is close, the name it may be a typo of.

## Why it matters
Records of an unmentioned tool are invisible to the specs. That is fine for tools no
spec cares about, but a tool name that is one letter off a spec's tool is the usual sign
of a typo on one side, and then the rule silently checks nothing.

## Example
    event create = call create_record
    initial idle
    idle -> idle on create

    {"kind":"call","tool":"create_record","call_id":"c1"}
    {"kind":"call","tool":"create_recrod","call_id":"c2"}

reports `create_recrod`, and asks: did you mean `create_record`? Fix the name on the
side that is wrong.
"##;

const UNSEEN_TOOL: &str = r##"## What it means
With `tracegate lint --traces`: an event names a tool (by its exact name) that occurs
nowhere in the traces. The report points at the tool in the spec and, if one is close,
suggests the traced tool it may be a typo of.

## Why it matters
An event whose tool never occurs never fires, so its rules are never exercised by the
corpus. A misspelt tool name in a spec fails open: the forbidden move goes unreported.

## Example
    event create = call create_record
    event note   = call attach_notes
    initial idle
    idle -> done on create
    done -> done on note

    {"kind":"call","tool":"create_record","call_id":"c1"}

No trace calls `attach_notes`. Fix the spelling in the spec if the tool is really
`attach_note`, or add traces that exercise the tool.
"##;

const UNKNOWN_FORMAT: &str = r##"## What it means
A trace file is JSON, but tracegate found no transcript in it: not native records, and
no OpenAI Chat Completions messages, OpenAI Responses items, Anthropic Messages, MCP /
JSON-RPC messages, OpenTelemetry OTLP spans, ATIF trajectory, ToolBench search tree,
Claude Code session log, Codex CLI rollout or Gemini CLI session where it looked (at the top, in an object holding a list such as `messages` or `steps`,
or in an array of runs each holding one). With `--select PATH`, the path selected
nothing, or nothing that holds a transcript. The message names the formats tried.

## Why it matters
A file that holds no transcript checks nothing. Reporting it as conforming would hide
a recording tracegate cannot read; so it is an error, and the run exits 2.

## Example
    {
      "experiment": "nightly",
      "results": {"runs": 3, "passed": 2}
    }

Nothing in this file is a message list. If the transcripts are somewhere tracegate did
not look, say where with `--select` (for instance `--select 'results.episodes[*].turns'`),
and the format with `--format NAME` if it is not detected; `tracegate convert` shows
what is read.
"##;

const USAGE_ERROR: &str = r##"## What it means
The command line was well formed, but one of its values cannot be used: a `--select` or
`--trace-by` path that does not parse, a diagnostic code or help topic that does not
exist, `--violation 0`, a `--min` percentage outside 0 to 100, or `fmt -` (standard
input) named beside other paths. The message names the flag; a close name is suggested.
Nothing is read or checked.

## Why it matters
A run that silently ignored a mistyped value would check something other than what was
asked; so the mistake is an error (exit status 2), reported before any file is read.

## Example
    tracegate coverage --min 150

`--min` is a percentage: write a number from 0 to 100.
"##;

const UNTYPED_RECORDS: &str = r##"## What it means
A trace file was read as native JSONL records (one JSON object per line, detected from
its content), but no record in it has a `kind` or a `tool` field, and none matched an
event of any spec. The warning names the formats its records look like, when they look
like one tracegate reads.

## Why it matters
Specs match calls, results and messages by `kind` and `tool`: in a file with neither,
no such pattern matches, and a log in a format tracegate does not read would pass every
spec silently. (Specs that match such records with `record where …` still work.)

## Example
    event finished = record where event == "run_finished"
    initial idle
    idle -> idle on finished

    {"ts":"2025-11-07T11:05:01Z","event":"tool_start","name":"create_record","input":{"request_id":"r1"}}
    {"ts":"2025-11-07T11:05:31Z","event":"tool_end","name":"create_record","error":"timed out"}
    {"ts":"2025-11-07T11:05:34Z","event":"tool_start","name":"create_record","input":{"request_id":"r2"}}

Name the file's format with `--format NAME`, or give records `kind` and `tool`.
"##;

const BROKEN_CHAIN: &str = r##"## What it means
A log sealed by `tracegate seal` (or any recorder that writes docs/chain-format.md) does
not verify: a record's content no longer hashes to its `hash` (modified), its `prev` is
not the hash of the record before (deleted, inserted or reordered), the first `prev` is
not 64 zeros (bad genesis), `prev` or `hash` is missing or not 64 lowercase hex digits,
the last hash is not the one pinned with `--head` or signed (cut short or tail
replaced), or the head's signature does not check (`--key`). The report names the kind,
the line, and the expected and found hash.

## Why it matters
A check of an edited log proves nothing about what the agent did. Records from the
break on are unverified.

## Example
    tracegate check --verify-chain --traces trace.jsonl

    {"args":{"city":"Oslo"},"call_id":"c1","hash":"b210614d0880b47cd6eae073834b1ca3e93ad398214b80aa09e7515b3d3efdde","kind":"call","prev":"0000000000000000000000000000000000000000000000000000000000000000","tool":"get_weather"}
    {"call_id":"c1","hash":"dfe2dafcf718532e9a23f0a36b891afbf56f663cc8055b9c60cdd17b379c6da8","kind":"result","output":{"celsius":24},"prev":"b210614d0880b47cd6eae073834b1ca3e93ad398214b80aa09e7515b3d3efdde","status":"ok","tool":"get_weather"}

The second record was edited after sealing (4 became 24): a modified record.
Restore the original log; never re-seal an edited one.
"##;

const UNUSABLE_TIME: &str = r##"## What it means
With `check --join`, records of several logs are merged by their `time` field, an
RFC 3339 date-time such as "2025-04-12T10:18:03Z". This record has no `time`, or its
`time` is not one (a date alone, no offset, a number), so it cannot be placed in the
merged stream and is left out.

## Why it matters
A record left out, or put in the wrong place, can hide or invent a violation.

## Example
    tracegate check --join --trace-by id --traces trace.jsonl

    {"time":"2025-04-12T10:18:03Z","id":"op-1","event":"dispatch_started"}
    {"id":"op-1","event":"remote_committed"}
    {"time":"2025-04-12","id":"op-1","event":"remote_committed"}
    {"time":"2025-04-12T10:18:04Z","id":"op-1","event":"remote_committed"}

Give every record a time with an offset: `"time":"2025-04-12T10:18:03Z"`.
"##;

const TIME_OUT_OF_ORDER: &str = r##"## What it means
`check --join` merges logs that are each in time order, reading one line of each at a
time. This record is earlier than the one before it in its own file, so records around
it may have been checked out of order. Only the first such record of a file is reported.

## Why it matters
The verdicts for the keys near this point may be wrong.

## Example
    tracegate check --join --trace-by id --traces trace.jsonl

    {"time":"2025-04-12T10:18:04Z","id":"op-1","event":"dispatch_started"}
    {"time":"2025-04-12T10:18:03Z","id":"op-2","event":"dispatch_started"}
    {"time":"2025-04-12T10:18:05Z","id":"op-1","event":"remote_committed"}
    {"time":"2025-04-12T10:18:06Z","id":"op-2","event":"remote_committed"}

Sort the file by `time` (a stable sort keeps equal times in line order) and join again.
"##;

const MISSING_KEY: &str = r##"## What it means
A record of a keyed spec's event lacks the `per` key, and no instance of the spec exists
yet in its trace to take it (a record without the key goes to every live instance). When no
record carries the key at all, one finding says so, with the fields the records have.

## Why it matters
A missing correlation id is a failure of the run, and a record no instance sees could
hide a violation: tracegate fails closed (exit 2) rather than drop it unseen.

## Example
    event create = call create_record
    event failed = result create_record where status == "error"
    per args.request_id
    initial idle
    idle    -> pending on create
    pending -> doubt   on failed
    forbid doubt on create: "blind re-create: look it up by request id first"

    {"kind":"call","tool":"create_record","call_id":"c1","args":{}}
    {"kind":"call","tool":"create_record","call_id":"c2","args":{"request_id":"r-2"}}

Make the agent send the id with every call (or fix a misspelt `per` path).
"##;

const PROVENANCE_LIMIT: &str = r##"## What it means
A spec tests provenance (`in outputs`, `in messages`), so each trace keeps an index of the
distinct values its outputs and messages showed: at most 262,144 (`--provenance-limit N`).
This trace filled it at the record reported. The values shown there and after it are not
remembered; the warning comes once per trace.

## Why it matters
A value that was not remembered is not found: `args.id in outputs` is false for it, so a
write citing it is reported as a violation it may not be. No check is weakened (nothing
passes because of the bound), but a finding after this point may be a false one.

## Example
    tracegate check specs/ids_from_tool_output.tg --traces trace.jsonl --provenance-limit 4

    {"kind":"result","tool":"list_payments","status":"ok","output":[{"id":"pay_1001"},{"id":"pay_1002"},{"id":"pay_1003"}]}
    {"kind":"call","tool":"refund_payment","args":{"payment_id":"pay_1001"}}

Raise the bound for traces this large, or split them with `--trace-by`.
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_complete_explanation() {
        for &code in Code::ALL {
            let text = explain(code);
            assert!(!text.trim().is_empty(), "{code}: empty explanation");
            let mut last = 0;
            for heading in ["## What it means", "## Why it matters", "## Example"] {
                let at = text
                    .find(heading)
                    .unwrap_or_else(|| panic!("{code}: missing heading {heading:?}"));
                assert!(at >= last, "{code}: heading {heading:?} out of order");
                last = at;
            }
            let lines = text.lines().count();
            assert!(
                (8..=25).contains(&lines),
                "{code}: explanation has {lines} lines, expected 8 to 25"
            );
        }
    }
}
