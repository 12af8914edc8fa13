//! What the adapters share: how text outputs, arguments and content parts become
//! canonical fields, and the pairing of calls with results in turn-based transcripts.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use std::rc::Rc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::{Element, Made, Out, Site};

pub type Map = serde_json::Map<String, Value>;

/// A record's fields, starting with its `kind`.
pub fn fields(kind: &str) -> Map {
    let mut map = Map::new();
    map.insert("kind".into(), Value::String(kind.into()));
    map
}

pub fn put(map: &mut Map, key: &str, value: impl Into<Value>) {
    map.insert(key.to_string(), value.into());
}

/// "a string", "an object", …: for messages about a value of the wrong type.
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string field of an object.
pub fn str_of<'v>(map: &'v Map, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// An id given as a string or an integer, as text.
pub fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// `args` from a call's arguments: a JSON string is parsed; one that does not parse
/// stays a string and the record gets `args_error` saying why. Anything else is kept
/// as it is. Absent arguments give no `args`.
pub fn put_args(map: &mut Map, raw: Option<&Value>) {
    match raw {
        None => {}
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(parsed) => put(map, "args", parsed),
            Err(err) => {
                put(map, "args", text.clone());
                put(
                    map,
                    "args_error",
                    format!("arguments are not valid JSON: {err}"),
                );
            }
        },
        Some(other) => put(map, "args", other.clone()),
    }
}

/// The value a text output stands for: JSON text of an object or array is decoded (so
/// `output.category` reaches into `"{\"category\": …}"`); any other text stays text.
pub fn text_value(text: &str) -> Value {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(value @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str(text) {
            return value;
        }
    }
    Value::String(text.to_string())
}

/// Stores a tool's output (or error) that came as `content`: a string, a list of
/// content parts, or any other JSON value.
///
/// Text (a string, or a list of text parts only) sets `{key}_text` to the text and
/// `{key}` to [`text_value`] of it. A list with other parts is kept as it is, with its
/// text parts in `{key}_text`. Any other value, `null` included, is kept as it is.
/// Absent content sets nothing.
pub fn put_content(map: &mut Map, key: &str, content: Option<&Value>) {
    let text_key = text_key(key);
    match content {
        None => {}
        Some(Value::String(text)) => {
            put(map, key, text_value(text));
            put(map, &text_key, text.clone());
        }
        Some(Value::Array(parts)) if !parts.is_empty() => match parts_text(parts) {
            (text, true) => {
                put(map, key, text_value(&text));
                put(map, &text_key, text);
            }
            (text, false) => {
                put(map, key, Value::Array(parts.clone()));
                if !text.is_empty() {
                    put(map, &text_key, text);
                }
            }
        },
        Some(other) => put(map, key, other.clone()),
    }
}

/// The key of the text beside a `key` that may hold decoded text: `output_text`,
/// `error_text` (named without formatting, as nearly every result has one).
pub fn text_key(key: &str) -> Cow<'static, str> {
    match key {
        "output" => Cow::Borrowed("output_text"),
        "error" => Cow::Borrowed("error_text"),
        other => Cow::Owned(format!("{other}_text")),
    }
}

/// The text of a list of content parts, joined by newlines, and whether every part was
/// text. Text parts are `{"type": "text" | "input_text" | "output_text", "text": …}`
/// (and AgentDojo's `{"type": "text", "content": …}`); bare strings count as text.
pub fn parts_text(parts: &[Value]) -> (String, bool) {
    let mut texts = Vec::new();
    let mut all = true;
    for part in parts {
        match part_text(part) {
            Some(text) => texts.push(text),
            None => all = false,
        }
    }
    (texts.join("\n"), all)
}

fn part_text(part: &Value) -> Option<&str> {
    match part {
        Value::String(text) => Some(text),
        Value::Object(map) => {
            let ty = str_of(map, "type");
            if !matches!(ty, Some("text" | "input_text" | "output_text") | None) {
                return None;
            }
            str_of(map, "text").or_else(|| str_of(map, "content"))
        }
        _ => None,
    }
}

/// A `message` record with its role, and its text and refusal where it has them;
/// `None` for a message with neither (nothing a spec could read).
/// Marks a result `invalid`: its `field` is `value` (`None`: absent), not the
/// `expected` kind of value that says how the call went.
pub fn put_invalid(record: &mut Map, field: &str, value: Option<&Value>, expected: &str) {
    put(record, "status", "invalid");
    put(
        record,
        "invalid_reason",
        format!(
            "`{field}` is {}, expected {expected}",
            value.map_or("absent", describe)
        ),
    );
}

/// Reads a transcript whose elements are messages, one at a time, pairing each result
/// with its call; a call no result answers gets a `missing` result saying
/// `why_missing`.
pub fn read_messages(
    elements: &[Element<'_>],
    out: &mut Out,
    why_missing: &'static str,
    message: fn(&Element<'_>, &mut Pairer),
) {
    let mut pairer = Pairer::new(why_missing);
    for element in elements {
        message(element, &mut pairer);
    }
    pairer.finish(out);
}

/// The element's object, or `None` after a problem saying that the `what` (a message,
/// a step) is not one.
pub fn element_object<'v>(
    element: &Element<'v>,
    what: &str,
    pairer: &mut Pairer,
) -> Option<&'v Map> {
    match element.value {
        Value::Object(map) => Some(map),
        other => {
            pairer.problem(
                element.site.clone(),
                format!("{what} is {}, expected an object", describe(other)),
            );
            None
        }
    }
}

pub fn message_record(role: &str, text: Option<String>, refusal: Option<&str>) -> Option<Map> {
    if text.is_none() && refusal.is_none() {
        return None;
    }
    let mut record = fields("message");
    put(&mut record, "role", role);
    if let Some(text) = text {
        put(&mut record, "text", text);
    }
    if let Some(refusal) = refusal {
        put(&mut record, "refusal", refusal);
    }
    Some(record)
}

/// The text of a message's content: a string, or the text parts of a list.
pub fn message_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let (text, _) = parts_text(parts);
            Some(text)
        }
        _ => None,
    }
}

/// Which call a result answers.
#[derive(Debug)]
pub enum Target {
    /// The call with this id.
    Id(String),
    /// The call with this id, chosen by position because the format gave none.
    IdByPosition(String),
    /// The oldest open call without an id of this tool (of any tool if `None`).
    Position(Option<String>),
}

enum Event {
    /// A point where the agent moves on: calls still unanswered, that no later result
    /// answers, get their `missing` result here.
    Boundary,
    Record(Site, Made),
    Call(usize),
    Problem(Site, String),
}

struct Call {
    site: Site,
    fields: Made,
    answered: bool,
    reported: bool,
    by_position: bool,
    /// Whether its record was handed on: once it is also answered, nothing reads its
    /// fields or site again, and they are dropped.
    emitted: bool,
}

/// What a result names: a call's id, or the tool whose oldest open call by position
/// it answers (`None`: any tool's).
pub enum Named {
    Id(String),
    Position(Option<String>),
}

/// What becomes of a call not answered yet when the agent has moved on
/// ([`Pairer::fate`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// A result still to be read may answer it.
    Waits,
    /// A result still to be read answers it.
    Answered,
    /// No result still to be read answers it.
    Never,
}

/// What results name ([`Pairer::learn_answers`]): the numbers of the results that
/// name each id, and of those that name each tool, or none, of calls by position.
#[derive(Default)]
pub struct Answers {
    ids: FxHashMap<String, Numbers>,
    tools: FxHashMap<String, Numbers>,
    any_tool: Option<Numbers>,
}

/// The numbers of the results that name an id, in order: nearly always one.
enum Numbers {
    One(usize),
    Many(Vec<usize>),
}

impl Numbers {
    /// Adds `number`, after every one before.
    fn push(&mut self, number: usize) {
        match self {
            Numbers::Many(numbers) => numbers.push(number),
            Numbers::One(first) => *self = Numbers::Many(vec![*first, number]),
        }
    }

    /// Adds `number` to the numbers of `entry`'s key.
    fn add(entry: Entry<'_, String, Numbers>, number: usize) {
        entry
            .and_modify(|numbers| numbers.push(number))
            .or_insert(Numbers::One(number));
    }

    /// How many are `from` or more.
    fn from(&self, from: usize) -> usize {
        match self {
            Numbers::One(number) => usize::from(*number >= from),
            Numbers::Many(numbers) => numbers.len() - numbers.partition_point(|&n| n < from),
        }
    }
}

impl Answers {
    /// Notes that result `number`, after every one noted before, names `named`.
    pub fn note(&mut self, named: Named, number: usize) {
        match named {
            Named::Id(id) => Numbers::add(self.ids.entry(id), number),
            Named::Position(Some(tool)) => Numbers::add(self.tools.entry(tool), number),
            Named::Position(None) => match &mut self.any_tool {
                Some(numbers) => numbers.push(number),
                None => self.any_tool = Some(Numbers::One(number)),
            },
        }
    }
}

/// What a look ahead learns for a transcript's pairers ([`Pairer::learn_answers`]): for
/// each that does not know yet (by its index: a transcript's one, or a log's threads'
/// in the order they started), what the results to come name, numbered on from the
/// results it read.
pub struct Learning {
    answers: Vec<Option<(Answers, usize)>>,
}

impl Learning {
    /// For `pairers`, as they are now.
    pub fn of<'p>(pairers: impl IntoIterator<Item = &'p Pairer>) -> Learning {
        let learns =
            |pairer: &Pairer| (!pairer.learned()).then(|| (Answers::default(), pairer.results));
        Learning {
            answers: pairers.into_iter().map(learns).collect(),
        }
    }

    /// Notes what the next results read into pairer `index` name, in order. An index
    /// past the pairers there were is a pairer that started since (a log's thread),
    /// whose results are numbered from its first.
    pub fn note(&mut self, index: usize, named: Vec<Named>) {
        if index >= self.answers.len() {
            self.answers
                .resize_with(index + 1, || Some((Answers::default(), 0)));
        }
        if let Some((answers, number)) = &mut self.answers[index] {
            for named in named {
                answers.note(named, *number);
                *number += 1;
            }
        }
    }

    /// Tells each of `pairers` (the same, by index) that learns what was noted; what
    /// the pairers that started since learn, in order after them.
    pub fn teach<'p>(self, pairers: impl IntoIterator<Item = &'p mut Pairer>) -> Vec<Answers> {
        let mut answers = self.answers.into_iter();
        for (pairer, learns) in pairers.into_iter().zip(answers.by_ref()) {
            if let Some((answers, _)) = learns {
                pairer.learn_answers(Rc::new(answers));
            }
        }
        answers.flatten().map(|(answers, _)| answers).collect()
    }
}

/// Pairs calls with results in a transcript whose turns are known, and places the
/// `missing` results of calls that never got one.
///
/// Results pair with earlier calls: by id, or, for calls without one, by position (the
/// next result for the same tool). Calls without an id get a stable synthetic id
/// (`pos-1`, `pos-2`, …) and both records say `"paired_by": "position"`, so the
/// checker pairs them the same way. A call that no result ever answers gets a
/// `status: "missing"` result at the first boundary after it (the agent's next turn),
/// where the format guarantees the reply can no longer come; one still open at the end
/// is left to the checker, which synthesizes it at the end of the trace.
pub struct Pairer {
    /// What is not handed on yet ([`Pairer::flush_in`] hands on what is final).
    events: VecDeque<Event>,
    /// Calls handed on without an answer yet, waiting for the next boundary.
    pending: Vec<usize>,
    /// Events at the end of `events`, and calls from this one on, whose sites are not
    /// pinned yet ([`Pairer::pin_new`]).
    unpinned_events: usize,
    unpinned_calls: usize,
    /// Whether a record (a call, a result, a message) was read: the transcript then
    /// has a trace, whenever its records are handed on.
    recorded: bool,
    /// The calls from number `first` on: a call answered and handed on is read no
    /// more, and those at the front are dropped, so a long transcript whose calls are
    /// answered holds only the calls still open (and those after the oldest of them).
    calls: VecDeque<Call>,
    first: usize,
    open_by_id: FxHashMap<String, VecDeque<usize>>,
    open_anonymous: Vec<usize>,
    anonymous_seen: usize,
    /// Results read so far ([`Pairer::result`]).
    results: usize,
    /// What the results still to be read name, once a look ahead found it
    /// ([`Pairer::learn_answers`]): then what follows a call by id need not wait for
    /// its answer, which is known to come or not.
    answers_ahead: Option<Rc<Answers>>,
    /// For a look ahead: what each result names, in order.
    named: Option<Vec<Named>>,
    /// Why a missing result was placed at a boundary, for its `synthesized` field.
    why_missing: &'static str,
    /// Fields every record gets until the stamp changes (an envelope's time), and the
    /// ones results get besides; a record's own fields win. Synthesized results get
    /// none: they were never recorded.
    stamp: Map,
    result_stamp: Map,
}

impl Pairer {
    pub fn new(why_missing: &'static str) -> Pairer {
        Pairer {
            events: VecDeque::new(),
            pending: Vec::new(),
            unpinned_events: 0,
            unpinned_calls: 0,
            recorded: false,
            calls: VecDeque::new(),
            first: 0,
            open_by_id: FxHashMap::default(),
            open_anonymous: Vec::new(),
            anonymous_seen: 0,
            results: 0,
            answers_ahead: None,
            named: None,
            why_missing,
            stamp: Map::new(),
            result_stamp: Map::new(),
        }
    }

    /// A new pairer for the same transcript format, which notes what each result
    /// names ([`Pairer::take_named`]), for a look ahead.
    pub fn naming(&self) -> Pairer {
        Pairer {
            named: Some(Vec::new()),
            ..Pairer::new(self.why_missing)
        }
    }

    /// What each result read since the last call names, in order, when
    /// [`Pairer::naming`] made this pairer.
    pub fn take_named(&mut self) -> Vec<Named> {
        self.named.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Whether it learned what the results still to be read name
    /// ([`Pairer::learn_answers`]).
    pub fn learned(&self) -> bool {
        self.answers_ahead.is_some()
    }

    /// Sets the fields the records that follow get: `all` on every record, `results`
    /// on results besides.
    pub fn set_stamp(&mut self, all: Map, results: Map) {
        self.stamp = all;
        self.result_stamp = results;
    }

    fn stamped(&self, fields: impl Into<Made>, result: bool) -> Made {
        let mut fields = fields.into();
        let extra = self
            .stamp
            .iter()
            .chain(result.then_some(&self.result_stamp).into_iter().flatten());
        for (key, value) in extra {
            if !fields.contains(key) {
                match &mut fields {
                    Made::Map(map) => {
                        map.insert(key.clone(), value.clone());
                    }
                    Made::Built(built) => built.value(key.clone(), value),
                }
            }
        }
        fields
    }

    /// Whether a record was read ([`Pairer::record`], [`Pairer::call`],
    /// [`Pairer::result`]), handed on or not.
    pub fn recorded(&self) -> bool {
        self.recorded
    }

    fn push(&mut self, event: Event) {
        self.recorded |= matches!(event, Event::Record(..) | Event::Call(_));
        self.events.push_back(event);
        self.unpinned_events += 1;
    }

    pub fn boundary(&mut self) {
        self.push(Event::Boundary);
    }

    pub fn record(&mut self, site: Site, fields: impl Into<Made>) {
        let fields = self.stamped(fields, false);
        self.push(Event::Record(site, fields));
    }

    pub fn problem(&mut self, site: Site, message: impl Into<String>) {
        self.push(Event::Problem(site, message.into()));
    }

    /// A call; `fields` has its `tool` and `args`. `id: None` pairs by position.
    pub fn call(&mut self, site: Site, fields: impl Into<Made>, id: Option<String>) {
        let mut fields = self.stamped(fields, false);
        let number = self.first + self.calls.len();
        let by_position = id.is_none();
        let id = match id {
            Some(id) => {
                self.open_by_id
                    .entry(id.clone())
                    .or_default()
                    .push_back(number);
                id
            }
            None => {
                self.anonymous_seen += 1;
                self.open_anonymous.push(number);
                format!("pos-{}", self.anonymous_seen)
            }
        };
        fields.insert("call_id", Value::String(id));
        if by_position {
            fields.insert("paired_by", Value::from("position"));
        }
        self.calls.push_back(Call {
            site,
            fields,
            answered: false,
            reported: false,
            emitted: false,
            by_position,
        });
        self.push(Event::Call(number));
    }

    /// A result of the call `target` names. The result gets the call's id and, when it
    /// names none itself, the call's tool.
    pub fn result(&mut self, site: Site, fields: impl Into<Made>, target: Target) {
        self.results += 1;
        if let Some(named) = &mut self.named {
            named.push(match &target {
                Target::Id(id) | Target::IdByPosition(id) => Named::Id(id.clone()),
                Target::Position(tool) => Named::Position(tool.clone()),
            });
        }
        let mut fields = self.stamped(fields, true);
        let (call, by_position, id) = match target {
            Target::Id(id) => (self.take_by_id(&id), false, Some(id)),
            Target::IdByPosition(id) => (self.take_by_id(&id), true, Some(id)),
            Target::Position(tool) => {
                let found = self.open_anonymous.iter().position(|&number| {
                    // A call dropped is done with (a look ahead found no answer to it).
                    number >= self.first
                        && (tool.is_none()
                            || call_tool(self.call_at(number)).as_deref() == tool.as_deref())
                });
                (found.map(|i| self.open_anonymous.remove(i)), true, None)
            }
        };
        match call.filter(|&number| number >= self.first) {
            Some(number) => {
                let call = self.call_mut(number);
                call.answered = true;
                fields.copy("call_id", &call.fields);
                if !fields.contains("tool") {
                    fields.copy("tool", &call.fields);
                }
                if by_position {
                    fields.insert("paired_by", Value::from("position"));
                }
                if call.emitted {
                    call.fields = Made::Map(Map::new());
                    call.site = Site::new(call.site.doc, String::new());
                    self.drop_done();
                }
            }
            None => {
                if let Some(id) = id {
                    fields.insert("call_id", Value::String(id));
                }
            }
        }
        self.push(Event::Record(site, fields));
    }

    fn call_at(&self, number: usize) -> &Call {
        &self.calls[number - self.first]
    }

    fn call_mut(&mut self, number: usize) -> &mut Call {
        &mut self.calls[number - self.first]
    }

    /// Whether call `number` is answered (a call dropped was).
    fn answered(&self, number: usize) -> bool {
        number < self.first || self.call_at(number).answered
    }

    /// What becomes of call `number`, not answered yet, when the agent has moved on:
    /// any result still to be read may answer it, unless a look ahead found what they
    /// name. Then a call by id is answered when fewer calls open with its id are older
    /// than it than results still to be read name the id (each such result answers
    /// the oldest call open with it), and never otherwise; a call by position alike,
    /// by its tool, unless a result still to be read names no tool (it answers the
    /// oldest call by position of any tool): then it waits.
    fn fate(&self, number: usize) -> Fate {
        let Some(ahead) = &self.answers_ahead else {
            return Fate::Waits;
        };
        let call = self.call_at(number);
        let unread = |numbers: Option<&Numbers>| numbers.map_or(0, |n| n.from(self.results));
        if call.by_position {
            if unread(ahead.any_tool.as_ref()) > 0 {
                // One of them answers the oldest call by position, of any tool.
                return Fate::Waits;
            }
            // Each answers the oldest call by position of its tool.
            let Some(tool) = call_tool(call) else {
                return Fate::Never;
            };
            let older = self
                .open_anonymous
                .iter()
                .take_while(|&&open| open != number)
                .filter(|&&open| {
                    open >= self.first && call_tool(self.call_at(open)).as_deref() == Some(&*tool)
                })
                .count();
            return match older < unread(ahead.tools.get(tool.as_ref())) {
                true => Fate::Answered,
                false => Fate::Never,
            };
        }
        let Some(id) = call.fields.get("call_id") else {
            return Fate::Waits;
        };
        let Some(id) = id.as_str() else {
            return Fate::Waits;
        };
        let unread = unread(ahead.ids.get(id));
        let older = self
            .open_by_id
            .get(id)
            .and_then(|open| open.iter().position(|&open| open == number));
        match older {
            Some(older) if older < unread => Fate::Answered,
            // Not open (a call dropped): no result answers it.
            Some(_) | None => Fate::Never,
        }
    }

    /// Whether call `number` holds back what follows the boundary after it: it is not
    /// answered yet, and what becomes of it is not known yet.
    fn holds_back(&self, number: usize) -> bool {
        !self.answered(number) && self.fate(number) == Fate::Waits
    }

    /// Whether what is not handed on yet waits for the answer of a call that a result
    /// still to be read may give, and no look ahead has said which ids those results
    /// name ([`Pairer::learn_answers`]).
    pub fn waits_unknowing(&self) -> bool {
        self.answers_ahead.is_none()
            && matches!(self.events.front(), Some(Event::Boundary))
            && self.pending.iter().any(|&n| self.holds_back(n))
    }

    /// Records, problems and boundaries read and not handed on yet.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.events.len()
    }

    /// Learns what the results still to be read name ([`Answers`], results numbered
    /// on from those read, as [`Pairer::results`] counts them): from then on, a call
    /// by id is known answered or never where the agent moves on ([`Pairer::fate`]),
    /// one never answered gets its `missing` result there at once, and what follows is
    /// handed on without waiting for either.
    pub fn learn_answers(&mut self, answers: Rc<Answers>) {
        debug_assert!(self.answers_ahead.is_none(), "bug: a pairer learns twice");
        self.answers_ahead = Some(answers);
    }

    /// Drops the calls at the front that are answered, or can no longer be, and are
    /// handed on.
    fn drop_done(&mut self) {
        while self
            .calls
            .front()
            .is_some_and(|call| (call.answered || call.reported) && call.emitted)
        {
            self.calls.pop_front();
            self.first += 1;
        }
    }

    fn take_by_id(&mut self, id: &str) -> Option<usize> {
        let queue = self.open_by_id.get_mut(id)?;
        let number = queue.pop_front();
        if queue.is_empty() {
            self.open_by_id.remove(id);
        }
        number
    }

    /// Emits everything, in order, with the `missing` results in place.
    pub fn finish(self, out: &mut Out) {
        self.finish_in(None, out);
    }

    /// [`Pairer::finish`], with the records in the sub-trace `trace` of the transcript.
    pub fn finish_in(mut self, trace: Option<&str>, out: &mut Out) {
        self.emit(trace, true, out);
    }

    /// Emits what is final so far, in order, so that a transcript read element by
    /// element is handed on as it is read: everything before the first boundary at
    /// which a call is still unanswered, as a later result may yet answer it (or it
    /// gets its `missing` result there). What follows waits for that.
    pub fn flush_in(&mut self, trace: Option<&str>, out: &mut Out) {
        self.emit(trace, false, out);
        self.pin_new(out);
    }

    /// Pins the sites of what was added since the last call and is not handed on yet
    /// ([`Out::pin`]), so that it can be handed on after its document is gone.
    pub fn pin_new(&mut self, out: &Out) {
        let from = self.events.len() - self.unpinned_events.min(self.events.len());
        for event in self.events.range_mut(from..) {
            match event {
                Event::Record(site, _) | Event::Problem(site, _) => *site = out.pin(site),
                Event::Boundary | Event::Call(_) => {}
            }
        }
        let from = self.unpinned_calls.saturating_sub(self.first);
        for call in self.calls.range_mut(from..) {
            call.site = out.pin(&call.site);
        }
        self.unpinned_events = 0;
        self.unpinned_calls = self.first + self.calls.len();
    }

    fn emit(&mut self, trace: Option<&str>, end: bool, out: &mut Out) {
        let trace = trace.map(str::to_string);
        while let Some(event) = self.events.front() {
            if !end
                && matches!(event, Event::Boundary)
                && self.pending.iter().any(|&n| self.holds_back(n))
            {
                return;
            }
            let Some(event) = self.events.pop_front() else {
                break;
            };
            self.unpinned_events = self.unpinned_events.min(self.events.len());
            match event {
                Event::Boundary => {
                    let mut unanswerable = Vec::new();
                    let mut pending = std::mem::take(&mut self.pending);
                    for number in pending.drain(..) {
                        // Answered later: no `missing` result.
                        if !end && !self.answered(number) && self.fate(number) == Fate::Answered {
                            continue;
                        }
                        // A call dropped was answered.
                        let Some(call) = number
                            .checked_sub(self.first)
                            .and_then(|at| self.calls.get_mut(at))
                        else {
                            continue;
                        };
                        if call.answered || call.reported {
                            continue;
                        }
                        call.reported = true;
                        let mut missing = fields("result");
                        for key in ["tool", "call_id"] {
                            if let Some(value) = call.fields.get(key) {
                                missing.insert(key.into(), value.into_owned());
                            }
                        }
                        put(&mut missing, "status", "missing");
                        if call.by_position {
                            put(&mut missing, "paired_by", "position");
                        }
                        put(&mut missing, "synthesized", self.why_missing);
                        if !end {
                            // Passed before the end only when no result still to be
                            // read answers it: it is done with.
                            let id = missing.get("call_id").cloned();
                            unanswerable.push((number, call.by_position, id));
                        }
                        out.record_in(trace.clone(), &call.site.clone(), missing);
                    }
                    self.pending = pending;
                    for (number, by_position, id) in unanswerable {
                        if by_position {
                            self.open_anonymous.retain(|&open| open != number);
                        } else if let Some(Value::String(id)) = id
                            && let Some(queue) = self.open_by_id.get_mut(&id)
                        {
                            queue.retain(|&open| open != number);
                            if queue.is_empty() {
                                self.open_by_id.remove(&id);
                            }
                        }
                    }
                    self.drop_done();
                }
                Event::Record(site, fields) => out.made_in(trace.clone(), &site, fields),
                Event::Problem(site, message) => out.problem(&site, message),
                Event::Call(number) => {
                    let call = &mut self.calls[number - self.first];
                    call.emitted = true;
                    // An answered call's fields are not read again: its result took
                    // what it needed. Of one not answered yet, only what its result
                    // (or its `missing` one) takes is kept.
                    let kept = match call.answered {
                        true => Made::Map(Map::new()),
                        false => call.fields.only(&["tool", "call_id"]),
                    };
                    let fields = std::mem::replace(&mut call.fields, kept);
                    out.made_in(trace.clone(), &call.site, fields);
                    match call.answered {
                        true => {
                            call.site = Site::new(call.site.doc, String::new());
                            self.drop_done();
                        }
                        false => self.pending.push(number),
                    }
                }
            }
        }
    }
}

fn call_tool(call: &Call) -> Option<Cow<'_, str>> {
    match &call.fields {
        Made::Map(map) => str_of(map, "tool").map(Cow::Borrowed),
        Made::Built(built) => built.get("tool").and_then(|raw| {
            crate::trace::record::raw_string(crate::trace::record::RawJson::new(raw))
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    /// The records `out` holds, as JSON objects, and empties it.
    fn drained(out: &mut Out) -> Vec<Value> {
        out.items
            .drain(..)
            .map(|item| match item.what {
                super::super::Emit::Record(fields) => Value::Object(fields.into_fields().to_map()),
                super::super::Emit::Problem(message) | super::super::Emit::Placed(message) => {
                    json!({ "problem": message })
                }
            })
            .collect()
    }

    #[test]
    fn calls_answered_and_handed_on_are_dropped_and_a_late_answer_still_pairs() {
        let mut pairer = Pairer::new("next turn");
        let mut out = Out::default();
        let call = |n: usize| map(json!({"kind": "call", "tool": format!("t{n}")}));
        let result = || map(json!({"kind": "result", "status": "ok"}));
        // One call never answered in its turn, then a thousand answered ones.
        pairer.call(Site::new(0, "/open".into()), call(0), Some("open".into()));
        pairer.flush_in(None, &mut out);
        // A turn: call `n`, answered at once.
        let turn = |pairer: &mut Pairer, out: &mut Out, n: usize| {
            pairer.boundary();
            let id = format!("c{n}");
            pairer.call(Site::new(0, format!("/{n}")), call(n), Some(id.clone()));
            pairer.result(Site::new(0, format!("/{n}/r")), result(), Target::Id(id));
            pairer.flush_in(None, out);
        };
        for n in 1..=1000 {
            turn(&mut pairer, &mut out, n);
        }
        // The open call holds back what follows its turn (a later result may still
        // answer it), so every call is kept.
        assert_eq!(drained(&mut out).len(), 1);
        assert_eq!(pairer.calls.len(), 1001);
        // Answered late, it pairs: then every call is done, handed on, and dropped.
        pairer.result(
            Site::new(0, "/late".into()),
            result(),
            Target::Id("open".into()),
        );
        pairer.flush_in(None, &mut out);
        assert_eq!(pairer.calls.len(), 0);
        let records = drained(&mut out);
        assert_eq!(records.len(), 2001);
        assert_eq!(records[2000]["call_id"], "open");
        assert_eq!(records[2000]["tool"], "t0");
        // Calls after that are dropped as soon as they are answered and handed on.
        for n in 1001..=2000 {
            turn(&mut pairer, &mut out, n);
            assert!(pairer.calls.is_empty());
        }
        let records = drained(&mut out);
        assert_eq!(records.len(), 2000);
        assert_eq!(records[1998]["call_id"], "c2000");
        assert_eq!(records[1999]["tool"], "t2000");
    }

    #[test]
    fn a_call_handed_on_unanswered_keeps_only_what_its_result_takes() {
        use crate::trace::record::Built;
        let mut pairer = Pairer::new("next turn");
        let mut out = Out::default();
        // Calls as maps and as built objects, with an escape in a name, answered by
        // results of either kind, or never.
        let map_call = |tool: &str| {
            map(json!({"kind": "call", "tool": tool, "args": {"big": "x".repeat(100)}}))
        };
        let built_call = |raw_tool: &str| {
            let mut call = Built::default();
            call.string("kind", "call");
            call.raw("tool", raw_tool);
            call.raw("args", r#"{"big": 1}"#);
            call
        };
        let built_result = || {
            let mut result = Built::default();
            result.string("kind", "result");
            result.string("status", "ok");
            result
        };
        let map_result = || map(json!({"kind": "result", "status": "ok"}));
        pairer.call(
            Site::new(0, "/0".into()),
            map_call("m\"0"),
            Some("a".into()),
        );
        pairer.call(
            Site::new(0, "/1".into()),
            built_call(r#""b\u0031""#),
            Some("b".into()),
        );
        pairer.call(Site::new(0, "/2".into()), map_call("m2"), Some("c".into()));
        pairer.call(Site::new(0, "/3".into()), built_call(r#""b3""#), None);
        pairer.call(Site::new(0, "/4".into()), map_call("m4"), Some("e".into()));
        pairer.flush_in(None, &mut out);
        let handed = drained(&mut out);
        assert_eq!(handed.len(), 5);
        assert_eq!(handed[0]["args"]["big"], "x".repeat(100));
        assert_eq!(handed[1]["tool"], "b1");
        for call in &pairer.calls {
            let Made::Built(kept) = &call.fields else {
                panic!("a call handed on keeps a built object");
            };
            let names: Vec<_> = kept.members().map(|(name, _)| name).collect();
            assert_eq!(names, ["tool", "call_id"]);
        }
        for (at, result, target) in [
            ("/5", Made::from(built_result()), Target::Id("a".into())),
            ("/6", Made::from(map_result()), Target::Id("b".into())),
            ("/7", Made::from(map_result()), Target::Id("c".into())),
            ("/8", Made::from(built_result()), Target::Position(None)),
        ] {
            pairer.result(Site::new(0, at.into()), result, target);
        }
        pairer.boundary();
        pairer.finish(&mut out);
        let records = drained(&mut out);
        let pairs: Vec<_> = records
            .iter()
            .map(|r| (r["tool"].clone(), r["call_id"].clone(), r["status"].clone()))
            .collect();
        assert_eq!(
            pairs,
            [
                (json!("m\"0"), json!("a"), json!("ok")),
                (json!("b1"), json!("b"), json!("ok")),
                (json!("m2"), json!("c"), json!("ok")),
                (json!("b3"), json!("pos-1"), json!("ok")),
                (json!("m4"), json!("e"), json!("missing")),
            ]
        );
        assert_eq!(records[3]["paired_by"], "position");
        // The raw text of a built call's tool is what its built result carries.
        let mut pairer = Pairer::new("next turn");
        pairer.call(
            Site::new(0, "/0".into()),
            built_call(r#""b\u0031""#),
            Some("b".into()),
        );
        pairer.flush_in(None, &mut out);
        drained(&mut out);
        pairer.result(
            Site::new(0, "/1".into()),
            built_result(),
            Target::Id("b".into()),
        );
        pairer.finish(&mut out);
        let Some(super::super::Emit::Record(Made::Built(result))) =
            out.items.first().map(|i| &i.what)
        else {
            panic!("a built result stays built");
        };
        assert_eq!(result.get("tool"), Some(r#""b\u0031""#));
    }

    #[test]
    fn text_outputs_decode_only_containers() {
        assert_eq!(
            text_value(r#"{"category":"outcome_unknown"}"#),
            json!({"category": "outcome_unknown"})
        );
        assert_eq!(text_value(" [1]"), json!([1]));
        for text in ["0", "false", "", "null", "None", "\"x\"", "{not json", "[1"] {
            assert_eq!(text_value(text), json!(text), "{text:?} stays text");
        }
    }

    #[test]
    fn content_keeps_falsy_values_intact() {
        for (content, output, text) in [
            (json!(""), json!(""), Some("")),
            (json!("0"), json!("0"), Some("0")),
            (json!("None"), json!("None"), Some("None")),
            (json!("[]"), json!([]), Some("[]")),
            (json!("{}"), json!({}), Some("{}")),
            (json!([]), json!([]), None),
            (json!(null), json!(null), None),
            (json!(0), json!(0), None),
            (json!(false), json!(false), None),
            (json!({}), json!({}), None),
            (
                json!([{"type": "text", "text": "{\"a\": 1}"}]),
                json!({"a": 1}),
                Some("{\"a\": 1}"),
            ),
            (
                json!([{"type": "text", "content": ""}]),
                json!(""),
                Some(""),
            ),
        ] {
            let mut have = Map::new();
            put_content(&mut have, "output", Some(&content));
            assert_eq!(have.get("output"), Some(&output), "{content}");
            assert_eq!(
                have.get("output_text").and_then(Value::as_str),
                text,
                "{content}"
            );
        }
        let mut have = Map::new();
        put_content(&mut have, "output", None);
        assert!(have.is_empty());
    }

    #[test]
    fn mixed_parts_are_kept_whole() {
        let parts = json!([{"type": "text", "text": "see"}, {"type": "image", "url": "x"}]);
        let mut have = Map::new();
        put_content(&mut have, "output", Some(&parts));
        assert_eq!(have["output"], parts);
        assert_eq!(have["output_text"], "see");
    }

    #[test]
    fn arguments_parse_or_are_flagged() {
        let mut have = Map::new();
        put_args(&mut have, Some(&json!("{\"a\": 1}")));
        assert_eq!(have["args"], json!({"a": 1}));
        let mut have = Map::new();
        put_args(&mut have, Some(&json!("{\"a\": ")));
        assert_eq!(have["args"], json!("{\"a\": "));
        assert!(
            have["args_error"]
                .as_str()
                .unwrap()
                .contains("not valid JSON")
        );
        let mut have = Map::new();
        put_args(&mut have, Some(&json!({"b": 2})));
        assert_eq!(have["args"], json!({"b": 2}));
    }

    fn tool(name: &str) -> Map {
        map(json!({"kind": "call", "tool": name}))
    }

    fn site(n: usize) -> Site {
        Site::new(0, format!("/{n}"))
    }

    #[test]
    fn pairs_by_position_and_places_missing_results_at_the_next_boundary() {
        let mut pairer = Pairer::new("no result before the next assistant turn");
        pairer.boundary();
        pairer.call(site(0), tool("a"), None);
        pairer.call(site(1), tool("b"), None);
        pairer.call(site(2), tool("a"), None);
        pairer.result(
            site(3),
            map(json!({"kind": "result"})),
            Target::Position(Some("a".into())),
        );
        pairer.boundary();
        pairer.result(
            site(4),
            map(json!({"kind": "result"})),
            Target::Position(Some("a".into())),
        );
        let mut out = Out::default();
        pairer.finish(&mut out);
        let have: Vec<(String, Value)> = out
            .items
            .iter()
            .map(|item| match &item.what {
                super::super::Emit::Record(super::super::Made::Map(map)) => {
                    (item.site.pointer.to_string(), Value::Object(map.clone()))
                }
                super::super::Emit::Record(super::super::Made::Built(built)) => {
                    (item.site.pointer.to_string(), Value::Object(built.to_map()))
                }
                super::super::Emit::Problem(message) | super::super::Emit::Placed(message) => {
                    (item.site.pointer.to_string(), json!(message))
                }
            })
            .collect();
        assert_eq!(have.len(), 6, "{have:#?}");
        assert_eq!(have[0].1["call_id"], "pos-1");
        assert_eq!(have[3].1["call_id"], "pos-1");
        assert_eq!(have[3].1["tool"], "a");
        assert_eq!(have[3].1["paired_by"], "position");
        // `b` never got a result: missing at the boundary, located at its call.
        assert_eq!(have[4].0, "/1");
        assert_eq!(have[4].1["status"], "missing");
        assert_eq!(have[4].1["call_id"], "pos-2");
        // The second `a` is answered after the boundary: no missing result for it.
        assert_eq!(have[5].1["call_id"], "pos-3");
    }
}
