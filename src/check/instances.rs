//! How the checker stores one spec's instances within one trace, compactly: a trace
//! of many agents has hundreds of thousands of keys, most of them finished.
//!
//! Each instance is an [`Entry`] (its key, its state, whether it is live) in creation
//! order, which is the order end-of-trace reports and records lacking the key follow.
//! Keys are stored once, back to back in one string, and found through a hash table of
//! entry numbers, each beside 32 bits of its key's hash: growing the table, and most
//! mismatches, then read no key. In front of that table, once a run has thousands of
//! instances, a small set-associative table of recently used keys (128 KiB) answers the
//! records of the instances in flight: their entries and keys are among the newest,
//! still in the processor's cache, where the big table's slots are scattered over
//! megabytes. What only a live instance needs (its path, the last record it saw, its
//! variables) is a [`Body`] of one cache line in a slab, freed when the instance
//! finishes: when it stopped after a violation, or reached a sink state (accepting, and
//! no event can move it out or be a violation there). A finished instance is a
//! tombstone that keeps its entry, so its key still routes records to it, and nothing
//! more. A path of up to [`INLINE`] moves lives inside the body, without an allocation
//! of its own.

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::{Found, FoundKind};
use crate::diagnostic::PATH_LIMIT;
use crate::eval::Val;
use crate::machine::{EventId, Machine, Move, StateId};
use crate::trace::{Location, Pointer};

/// Bytes of encoded moves kept inside a body (four or five moves of a file of a few
/// million lines); a longer path moves to the heap.
const INLINE: usize = 22;

/// Elements per chunk of a [`Chunks`].
const CHUNK: usize = 1 << 12;

/// Slots of [`SpecRun::recent`] (8 bytes each): a few times the instances a busy trace
/// has in flight, small enough to stay in the processor's cache.
const RECENT: usize = 1 << 14;

/// Slots of a [`Ways`]: the keys of one place of [`SpecRun::recent`] that are kept.
const WAYS: usize = 4;

/// How many instances a run has before it keeps [`SpecRun::recent`]: below that, its
/// key table is small enough to stay in cache itself.
const RECENT_AFTER: usize = 1 << 12;

/// A [`Slot`] of [`SpecRun::recent`] that names no entry.
const NO_SLOT: Slot = Slot {
    entry: u32::MAX,
    hash: 0,
};

/// `Entry::life` of an instance that stopped after its violation.
const STOPPED: u32 = u32::MAX;
/// `Entry::life` of an instance in a sink state.
const SINK: u32 = u32::MAX - 1;

/// Which states of `machine` are sinks: accepting, and every event there either
/// keeps the instance in place or is ignored (`otherwise ignore`), so an instance
/// that reaches one can never report again. When guards read variables, the event a
/// record is depends on them, and an instance keeps its variables only while live: a
/// spec that both binds and reads variables has no sinks.
pub(super) fn sinks(machine: &Machine) -> Box<[bool]> {
    let reads_variables = machine.contextual && !machine.variables.is_empty();
    let mut sinks = machine.sinks();
    if reads_variables {
        sinks.fill(false);
    }
    sinks.into_boxed_slice()
}

/// A vector that grows by fixed chunks, so a large one never holds twice what it
/// needs, nor copies itself, the way a doubling `Vec` does.
struct Chunks<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunks<T> {
    fn push(&mut self, value: T) -> usize {
        if self.len % CHUNK == 0 {
            // Small runs (most of them) start small; a chunk is full-sized from the
            // second on.
            let capacity = if self.len == 0 { 4 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(capacity));
        }
        let index = self.len;
        let chunk = self
            .chunks
            .last_mut()
            .expect("bug: a chunk was just pushed");
        if chunk.len() == chunk.capacity() {
            chunk.reserve_exact((chunk.len() * 2).min(CHUNK) - chunk.len());
        }
        chunk.push(value);
        self.len += 1;
        index
    }

    fn get(&self, index: usize) -> &T {
        &self.chunks[index / CHUNK][index % CHUNK]
    }

    fn get_mut(&mut self, index: usize) -> &mut T {
        &mut self.chunks[index / CHUNK][index % CHUNK]
    }
}

/// The key stored at `start` of [`SpecRun::keys`].
fn key_at(keys: &[u8], start: usize) -> &[u8] {
    let mut length = [0u8; 4];
    length.copy_from_slice(&keys[start..start + 4]);
    let start = start + 4;
    &keys[start..start + u32::from_le_bytes(length) as usize]
}

/// Whether `slot` holds the entry of `key`, whose hash is `hash` (an empty slot of
/// [`SpecRun::recent`] holds none).
#[inline(always)]
fn names(keys: &[u8], entries: &Chunks<Entry>, slot: &Slot, hash: KeyHash, key: &str) -> bool {
    slot.hash == hash.0
        && slot.entry != NO_SLOT.entry
        && key_at(keys, entries.get(slot.entry as usize).key_start) == key.as_bytes()
}

/// An entry number in [`SpecRun::index`], with 32 bits of its key's hash ([`KeyHash`]).
#[derive(Clone, Copy)]
struct Slot {
    entry: u32,
    hash: u32,
}

/// The hash of an instance key (or a call id), in the two forms [`SpecRun::index`]
/// uses: the 32 bits each [`Slot`] keeps, and the table's 64-bit hash, computed from
/// those 32 bits alone so that the table grows without reading any key again.
#[derive(Clone, Copy)]
pub(super) struct KeyHash(u32);

impl KeyHash {
    pub(super) fn of(key: &[u8]) -> KeyHash {
        let full = FxBuildHasher.hash_one(key);
        KeyHash((full ^ (full >> 32)) as u32)
    }

    /// The 32 bits a slot keeps.
    pub(super) fn bits(self) -> u32 {
        self.0
    }

    /// The hash whose [`KeyHash::bits`] are `bits`.
    pub(super) fn from_bits(bits: u32) -> KeyHash {
        KeyHash(bits)
    }

    /// Spreads the 32 bits over 64: the table takes its bucket from the low bits and
    /// its tag from the top ones.
    pub(super) fn table(self) -> u64 {
        u64::from(self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// The key's place in [`SpecRun::recent`]: the top bits of the spread hash, which
    /// the big table uses only as its tag.
    fn recent(self) -> usize {
        (self.table() >> (64 - (RECENT / WAYS).trailing_zeros())) as usize
    }
}

/// One instance, live or finished.
#[derive(Clone, Copy)]
struct Entry {
    /// Where its key is in [`SpecRun::keys`] (its length first).
    key_start: usize,
    state: StateId,
    /// Its body's slot while live; [`STOPPED`] or [`SINK`] once finished.
    life: u32,
}

/// The slots of one place of [`SpecRun::recent`], the most recently added first; in
/// one cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Ways([Slot; WAYS]);

/// What a live instance needs beyond its entry: one cache line.
#[repr(align(64))]
struct Body {
    /// The last record delivered to it, where an unaccepted end is reported.
    last: Last,
    /// The file of `last`, in a joined stream ([`SpecRun::file`]).
    last_file: u32,
    /// The state the oldest kept move left, once there is a move: the states the
    /// later moves left follow from it and the machine, so they are not stored.
    first: StateId,
    path: Moves,
}

/// A record's [`Location`], in less room: the pointer is absent for every line of
/// native JSONL.
#[derive(Default)]
struct Last {
    line: u64,
    offset: u64,
    len: u64,
    pointer: Option<Box<Pointer>>,
}

impl Last {
    fn of(loc: &Location) -> Last {
        Last {
            line: loc.line,
            offset: loc.offset,
            len: loc.len,
            pointer: (!loc.pointer.is_empty()).then(|| Box::new(loc.pointer.clone())),
        }
    }

    /// Makes this the last record seen, `loc`: the box of a pointer is used again
    /// rather than a new one allocated for each record.
    fn set(&mut self, loc: &Location) {
        self.line = loc.line;
        self.offset = loc.offset;
        self.len = loc.len;
        match (&mut self.pointer, loc.pointer.is_empty()) {
            (pointer, true) => *pointer = None,
            (Some(pointer), false) => (**pointer).clone_from(&loc.pointer),
            (pointer @ None, false) => *pointer = Some(Box::new(loc.pointer.clone())),
        }
    }

    fn location(&self) -> Location {
        Location {
            line: self.line,
            offset: self.offset,
            len: self.len,
            pointer: self.pointer.as_deref().cloned().unwrap_or_default(),
        }
    }
}

/// One move of a path: the event that made it, at which line of which file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    line: u64,
    event: u32,
    /// [`SpecRun::file`]'s number of the record's file; 0 outside a joined stream.
    file: u32,
}

/// The moves of an instance, the last [`PATH_LIMIT`] of them.
///
/// Most instances make a few moves, and there are many instances: a short path is
/// kept inside the body, encoded in [`INLINE`] bytes (a few bytes a move), and only a
/// longer one is a list on the heap.
#[derive(Debug)]
enum Moves {
    /// Per move: the event (times two, plus one when a file follows), the distance of
    /// its line from the previous move's (zigzag, from line 0 for the first), and the
    /// file's number when there is one; each as a LEB128 varint.
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Spilled(Box<Spilled>),
}

#[derive(Debug)]
struct Spilled {
    /// Moves dropped from the front to keep [`PATH_LIMIT`].
    elided: u64,
    steps: VecDeque<Step>,
}

impl Default for Moves {
    fn default() -> Self {
        Moves::Inline {
            len: 0,
            bytes: [0; INLINE],
        }
    }
}

fn put_varint(out: &mut [u8], at: &mut usize, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out[*at] = byte;
            *at += 1;
            return;
        }
        out[*at] = byte | 0x80;
        *at += 1;
    }
}

fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return value;
        }
        shift += 7;
    }
}

/// The encoded moves of [`Moves::Inline`], decoded.
struct Decoded<'b> {
    bytes: &'b [u8],
    at: usize,
    line: u64,
}

impl Iterator for Decoded<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if self.at == self.bytes.len() {
            return None;
        }
        let tagged = get_varint(self.bytes, &mut self.at);
        let zigzag = get_varint(self.bytes, &mut self.at);
        let delta = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        self.line = self.line.wrapping_add(delta as u64);
        let file = if tagged & 1 == 1 {
            get_varint(self.bytes, &mut self.at) as u32
        } else {
            0
        };
        Some(Step {
            line: self.line,
            event: (tagged >> 1) as u32,
            file,
        })
    }
}

impl Moves {
    fn decoded(bytes: &[u8]) -> Decoded<'_> {
        Decoded {
            bytes,
            at: 0,
            line: 0,
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Moves::Inline { len: 0, .. })
    }

    fn steps(&self) -> Vec<Step> {
        match self {
            Moves::Inline { len, bytes } => Moves::decoded(&bytes[..usize::from(*len)]).collect(),
            Moves::Spilled(spilled) => spilled.steps.iter().copied().collect(),
        }
    }

    fn elided(&self) -> u64 {
        match self {
            Moves::Inline { .. } => 0,
            Moves::Spilled(spilled) => spilled.elided,
        }
    }

    /// Adds a move; returns the oldest one when it had to go to keep [`PATH_LIMIT`].
    fn push(&mut self, step: Step) -> Option<Step> {
        match self {
            Moves::Inline { len, bytes } => {
                let used = usize::from(*len);
                let previous = Moves::decoded(&bytes[..used]).last().map_or(0, |s| s.line);
                // The moves so far, then the new one: the most one move takes is three
                // varints of at most 10 bytes. Copies of fixed size, which need no call.
                let mut encoded = [0u8; INLINE + 30];
                encoded[..INLINE].copy_from_slice(bytes);
                let mut at = used;
                let tagged = u64::from(step.event) << 1 | u64::from(step.file != 0);
                put_varint(&mut encoded, &mut at, tagged);
                let delta = step.line.wrapping_sub(previous) as i64;
                put_varint(&mut encoded, &mut at, ((delta << 1) ^ (delta >> 63)) as u64);
                if step.file != 0 {
                    put_varint(&mut encoded, &mut at, u64::from(step.file));
                }
                if at <= INLINE {
                    bytes.copy_from_slice(&encoded[..INLINE]);
                    *len = at as u8;
                    return None;
                }
                let mut steps: VecDeque<Step> = Moves::decoded(&bytes[..used]).collect();
                steps.push_back(step);
                *self = Moves::Spilled(Box::new(Spilled { elided: 0, steps }));
                None
            }
            Moves::Spilled(spilled) => {
                let dropped = if spilled.steps.len() == PATH_LIMIT {
                    spilled.elided += 1;
                    spilled.steps.pop_front()
                } else {
                    None
                };
                spilled.steps.push_back(step);
                dropped
            }
        }
    }
}

/// One spec's instances within one trace.
pub(super) struct SpecRun {
    /// Whether the spec has a `per` key (otherwise its one instance has none).
    keyed: bool,
    /// Every instance's key, back to back, each after its length (4 bytes).
    keys: Vec<u8>,
    /// Entry numbers, hashed by their key.
    index: HashTable<Slot>,
    /// The slots of recently used keys, each at its key's [`KeyHash::recent`] place,
    /// which keeps the last [`WAYS`] keys found there; empty until the run has
    /// [`RECENT_AFTER`] instances. An entry never changes its key, so a slot here can
    /// be stale only by being dropped, never wrong.
    recent: Box<[Ways]>,
    entries: Chunks<Entry>,
    bodies: Chunks<Body>,
    /// Body slots freed by finished instances, for the next new ones.
    free: Vec<u32>,
    /// Every body's variables, `variables` slots each, at `slot * variables` (empty,
    /// and unallocated, when the spec binds none).
    vars: Vec<Option<Val<'static>>>,
    variables: usize,
    /// Files named by moves in a joined stream; a step's `file` is 1 + an index here.
    files: Vec<Arc<Path>>,
}

impl SpecRun {
    pub(super) fn new(machine: &Machine) -> SpecRun {
        SpecRun {
            keyed: !machine.per.is_empty(),
            keys: Vec::new(),
            index: HashTable::new(),
            recent: Box::default(),
            entries: Chunks::default(),
            bodies: Chunks::default(),
            free: Vec::new(),
            vars: Vec::new(),
            variables: machine.variables.len(),
            files: Vec::new(),
        }
    }

    /// How many instances the run has had, finished ones included.
    pub(super) fn len(&self) -> usize {
        self.entries.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.entries.len == 0
    }

    fn key_bytes(&self, entry: &Entry) -> &[u8] {
        key_at(&self.keys, entry.key_start)
    }

    fn key_text(&self, entry: &Entry) -> &str {
        std::str::from_utf8(self.key_bytes(entry)).expect("bug: keys are stored as text")
    }

    /// The entry [`SpecRun::recent`] holds for `key`, if it still does.
    fn find_recent(&self, hash: KeyHash, key: &str) -> Option<usize> {
        let ways = self.recent.get(hash.recent())?;
        let slot = ways
            .0
            .iter()
            .find(|slot| names(&self.keys, &self.entries, slot, hash, key))?;
        Some(slot.entry as usize)
    }

    /// Puts entry `entry`, of key hash `hash`, which [`SpecRun::recent`] does not hold,
    /// first in its place there, dropping the oldest of the place. The table is made
    /// once the run has [`RECENT_AFTER`] instances.
    fn remember(&mut self, hash: KeyHash, entry: usize) {
        if self.recent.is_empty() {
            if self.entries.len < RECENT_AFTER {
                return;
            }
            self.recent = vec![Ways([NO_SLOT; WAYS]); RECENT / WAYS].into_boxed_slice();
        }
        let ways = &mut self.recent[hash.recent()].0;
        ways.copy_within(..WAYS - 1, 1);
        ways[0] = Slot {
            entry: u32::try_from(entry).expect("bug: more than 4 billion instances"),
            hash: hash.0,
        };
    }

    /// The instance whose key is `key` (for a spec without a `per` key, `""`).
    pub(super) fn find(&self, key: &str) -> Option<usize> {
        let hash = KeyHash::of(key.as_bytes());
        if let Some(entry) = self.find_recent(hash, key) {
            return Some(entry);
        }
        self.index
            .find(hash.table(), |slot| {
                names(&self.keys, &self.entries, slot, hash, key)
            })
            .map(|slot| slot.entry as usize)
    }

    /// The instance whose key is `key`, made (see [`SpecRun::create`]) if there is
    /// none: the key is hashed, and the table searched, once.
    pub(super) fn find_or_create(
        &mut self,
        machine: &Machine,
        sinks: &[bool],
        key: &str,
        loc: &Location,
    ) -> usize {
        let hash = KeyHash::of(key.as_bytes());
        if let Some(entry) = self.find_recent(hash, key) {
            return entry;
        }
        let (keys, entries) = (&self.keys, &self.entries);
        let entry = self.index.entry(
            hash.table(),
            |slot| names(keys, entries, slot, hash, key),
            |slot| KeyHash(slot.hash).table(),
        );
        let index = match entry {
            hashbrown::hash_table::Entry::Occupied(found) => found.get().entry as usize,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                // The entry this number names is pushed right after.
                let entry =
                    u32::try_from(self.entries.len).expect("bug: more than 4 billion instances");
                vacant.insert(Slot {
                    entry,
                    hash: hash.0,
                });
                self.push(machine, sinks, key, loc)
            }
        };
        self.remember(hash, index);
        index
    }

    /// A new instance for `key`, in the initial state, which has seen the record at
    /// `loc` last.
    pub(super) fn create(
        &mut self,
        machine: &Machine,
        sinks: &[bool],
        key: &str,
        loc: &Location,
    ) -> usize {
        let index = self.push(machine, sinks, key, loc);
        let entry = u32::try_from(index).expect("bug: more than 4 billion instances");
        let hash = KeyHash::of(key.as_bytes());
        self.index.insert_unique(
            hash.table(),
            Slot {
                entry,
                hash: hash.0,
            },
            |slot| KeyHash(slot.hash).table(),
        );
        self.remember(hash, index);
        index
    }

    /// Stores a new instance for `key` (not yet in the key table); returns its number.
    fn push(&mut self, machine: &Machine, sinks: &[bool], key: &str, loc: &Location) -> usize {
        let key_start = self.keys.len();
        let length = u32::try_from(key.len()).expect("bug: a key longer than its line");
        self.keys.extend_from_slice(&length.to_le_bytes());
        self.keys.extend_from_slice(key.as_bytes());
        let state = machine.initial;
        let life = if sinks[state.index()] {
            SINK
        } else {
            let body = Body {
                last: Last::of(loc),
                last_file: 0,
                first: state,
                path: Moves::default(),
            };
            self.alloc(body)
        };
        self.entries.push(Entry {
            key_start,
            state,
            life,
        })
    }

    fn alloc(&mut self, body: Body) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                *self.bodies.get_mut(slot as usize) = body;
                slot
            }
            None => {
                let slot = self.bodies.push(body);
                self.vars.extend(std::iter::repeat_n(None, self.variables));
                u32::try_from(slot).expect("bug: more than 4 billion live instances")
            }
        }
    }

    /// Ends instance `index` for good: its body is freed, and it routes records to
    /// nothing from now on.
    fn finish(&mut self, index: usize, life: u32) {
        let entry = self.entries.get_mut(index);
        let slot = entry.life;
        entry.life = life;
        if slot < SINK {
            // What the body holds on the heap goes now; the slot is reused as it is.
            let body = self.bodies.get_mut(slot as usize);
            body.path = Moves::default();
            body.last.pointer = None;
            let vars = slot as usize * self.variables;
            self.vars[vars..vars + self.variables].fill(None);
            self.free.push(slot);
        }
    }

    /// The instance's key, if the spec has one.
    pub(super) fn key(&self, index: usize) -> Option<&str> {
        self.keyed.then(|| self.key_text(self.entries.get(index)))
    }

    pub(super) fn state(&self, index: usize) -> StateId {
        self.entries.get(index).state
    }

    /// Whether the instance stopped after a violation (it takes no more records).
    pub(super) fn stopped(&self, index: usize) -> bool {
        self.entries.get(index).life == STOPPED
    }

    /// The instance's variables (none once it is finished).
    pub(super) fn vars(&self, index: usize) -> &[Option<Val<'static>>] {
        let slot = self.entries.get(index).life;
        if slot >= SINK {
            return &[];
        }
        let start = slot as usize * self.variables;
        &self.vars[start..start + self.variables]
    }

    /// A live instance that has not reached an accepting state: where it was last
    /// seen, and in which file of a joined stream.
    pub(super) fn unaccepted(
        &self,
        machine: &Machine,
        index: usize,
    ) -> Option<(Location, Option<Arc<Path>>)> {
        let entry = self.entries.get(index);
        if entry.life >= SINK || machine.state(entry.state).accepting {
            return None;
        }
        let body = self.bodies.get(entry.life as usize);
        Some((body.last.location(), self.file(body.last_file)))
    }

    fn file(&self, number: u32) -> Option<Arc<Path>> {
        (number > 0).then(|| self.files[number as usize - 1].clone())
    }

    fn file_number(&mut self, file: Option<&Arc<Path>>) -> u32 {
        let Some(file) = file else {
            return 0;
        };
        // A joined stream has few files, and runs of records from the same one.
        let at = match self
            .files
            .iter()
            .rposition(|known| Arc::ptr_eq(known, file))
        {
            Some(at) => at,
            None => {
                self.files.push(file.clone());
                self.files.len() - 1
            }
        };
        u32::try_from(at + 1).expect("bug: more than 4 billion files")
    }

    /// What instance `index`, in its state, reports for `kind`, with the path that
    /// led there. Changes nothing: see [`SpecRun::stop`].
    pub(super) fn found(
        &self,
        machine: &Machine,
        index: usize,
        kind: FoundKind,
        event: Option<EventId>,
    ) -> Found {
        let entry = self.entries.get(index);
        let (path, elided) = match entry.life {
            life if life >= SINK => (Vec::new(), 0),
            slot => {
                let body = self.bodies.get(slot as usize);
                let mut state = body.first;
                let path = body
                    .path
                    .steps()
                    .into_iter()
                    .map(|step| {
                        let event = step.event as usize;
                        let from = state;
                        if let Move::Go { to, .. } = machine.step(from, event) {
                            state = to;
                        }
                        (from, event, step.line, self.file(step.file))
                    })
                    .collect();
                (path, body.path.elided())
            }
        };
        Found {
            kind,
            key: self.key(index).map(str::to_string),
            state: entry.state,
            event,
            path,
            elided,
        }
    }

    /// Stops instance `index` after its violation.
    pub(super) fn stop(&mut self, index: usize) {
        self.finish(index, STOPPED);
    }

    /// Moves instance `index` on `event`, found in `record` (of `file`, in a joined
    /// stream), after showing the move to the observer; returns the violation, if
    /// the move is one. An allowed move sets the event's `bind` variables (evaluated
    /// together, on the values from before the move); any other move binds nothing.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver(
        &mut self,
        machine: &Machine,
        sinks: &[bool],
        index: usize,
        event: EventId,
        (record, file): (&crate::trace::Record<'_>, Option<&Arc<Path>>),
        seen: Option<&crate::eval::Seen>,
        (observer, spec, trace, at_end): (&mut Option<super::Observer<'_>>, usize, usize, bool),
    ) -> Option<Found> {
        let loc = &record.loc;
        let entry = *self.entries.get(index);
        if entry.life == STOPPED {
            return None;
        }
        let step = machine.step(entry.state, event);
        if let Some(observe) = observer {
            observe(&super::Observation {
                spec,
                trace,
                key: self.key(index),
                from: entry.state,
                event,
                step,
                loc,
                at_end,
            });
        }
        if entry.life == SINK {
            // Every event keeps a sink's instance where it is, and none is a violation.
            return None;
        }
        let slot = entry.life as usize;
        let file = self.file_number(file);
        let body = self.bodies.get_mut(slot);
        body.last.set(loc);
        body.last_file = file;
        let Move::Go { to, .. } = step else {
            let kind = super::verdict(machine, step)?;
            let found = self.found(machine, index, kind, Some(event));
            self.stop(index);
            return Some(found);
        };
        if body.path.is_empty() {
            body.first = entry.state;
        }
        let first = body.first;
        let step_event = u32::try_from(event).expect("bug: more than 4 billion events");
        let dropped = body.path.push(Step {
            line: loc.line,
            event: step_event,
            file,
        });
        if let Some(dropped) = dropped {
            // The oldest move went: the path now starts where it led.
            if let Move::Go { to, .. } = machine.step(first, dropped.event as usize) {
                body.first = to;
            }
        }
        self.entries.get_mut(index).state = to;
        let binds = &machine.events[event].binds;
        if !binds.is_empty() {
            let start = slot * self.variables;
            let vars = &mut self.vars[start..start + self.variables];
            let ctx = crate::eval::Context { vars: &*vars, seen };
            // All binds of the event read the values from before the move; a value
            // that is missing or invalid leaves the variable unset.
            let values: Vec<(usize, Option<Val<'static>>)> = binds
                .iter()
                .map(|(slot, value)| {
                    let value = value.eval(record, &ctx).ok().flatten();
                    (*slot, value.map(Val::into_owned))
                })
                .collect();
            for (slot, value) in values {
                vars[slot] = value;
            }
        }
        if sinks[to.index()] {
            self.finish(index, SINK);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(line: u64, event: u32, file: u32) -> Step {
        Step { line, event, file }
    }

    #[test]
    fn a_path_reads_back_as_pushed_inline_spilled_and_elided() {
        let mut moves = Moves::default();
        let mut pushed = Vec::new();
        // Lines that go back (another file of a joined stream), far, and near; events
        // and files of several sizes.
        let lines = [7u64, 3, 1 << 40, 12, 12, u64::MAX, 0];
        for i in 0..PATH_LIMIT as u64 + 10 {
            let line = lines[i as usize % lines.len()].wrapping_add(i);
            let s = step(line, (i * 37 % 300) as u32, (i % 3) as u32);
            let dropped = moves.push(s);
            pushed.push(s);
            let expect_drop =
                (pushed.len() > PATH_LIMIT).then(|| pushed[pushed.len() - PATH_LIMIT - 1]);
            assert_eq!(dropped, expect_drop, "after {} moves", pushed.len());
            let kept = &pushed[pushed.len().saturating_sub(PATH_LIMIT)..];
            assert_eq!(moves.steps(), kept, "after {} moves", pushed.len());
            assert_eq!(moves.elided(), (pushed.len() - kept.len()) as u64);
        }
    }

    #[test]
    fn a_few_moves_of_a_long_file_stay_inline() {
        let mut moves = Moves::default();
        for i in 0..4u64 {
            moves.push(step(3_000_000 + i * 9_000, 5, 0));
        }
        assert!(matches!(moves, Moves::Inline { .. }));
        assert_eq!(moves.steps().len(), 4);
        assert!(std::mem::size_of::<Moves>() <= 24);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_instance_costs_what_the_readme_says() {
        // The README's figures: a live instance's body, and what a finished key keeps.
        assert_eq!(std::mem::size_of::<Body>(), 64);
        assert_eq!(std::mem::size_of::<Entry>(), 16);
    }

    #[test]
    fn keys_are_found_by_their_text_and_keep_their_order() {
        let source = std::sync::Arc::new(crate::machine::SpecSource::new(
            "t.tg",
            "spec t\nper args.id\nevent a = call a\ninitial s\naccept s\ns -> s on a\n",
        ));
        let machine = crate::spec::analyzer::load(source).expect("the spec compiles");
        let sinks = sinks(&machine);
        // `s` is accepting and every event keeps an instance there.
        assert_eq!(&*sinks, [true]);
        let mut run = SpecRun::new(&machine);
        let keys: Vec<String> = (0..10_000)
            .map(|i| format!("k{i}"))
            .chain(["".into(), "é".into()])
            .collect();
        for key in &keys {
            assert_eq!(run.find(key), None);
            let index = run.create(&machine, &sinks, key, &Location::default());
            assert_eq!(run.find(key), Some(index));
        }
        for (index, key) in keys.iter().enumerate() {
            assert_eq!(run.find(key), Some(index));
            assert_eq!(run.key(index), Some(key.as_str()));
        }
        assert_eq!(run.len(), keys.len());
        // So many keys are also held in the table of recent ones.
        assert_eq!(run.recent.len() * WAYS, RECENT);
        // An instance created in a sink keeps no body.
        assert!(run.bodies.len == 0);
    }

    #[test]
    fn keys_that_share_a_recent_place_keep_their_own_instances() {
        let source = std::sync::Arc::new(crate::machine::SpecSource::new(
            "t.tg",
            "spec t\nper args.id\nevent a = call a\ninitial s\ns -> s on a\n",
        ));
        let machine = crate::spec::analyzer::load(source).expect("the spec compiles");
        let sinks = sinks(&machine);
        let mut run = SpecRun::new(&machine);
        let at = Location::default();
        let filler: Vec<String> = (0..RECENT_AFTER).map(|i| format!("f{i}")).collect();
        for key in &filler {
            run.find_or_create(&machine, &sinks, key, &at);
        }
        assert!(!run.recent.is_empty());
        // More keys of one place in the table of recent keys than it keeps: each
        // drops another in turn.
        let place = KeyHash::of(b"a").recent();
        let keys: Vec<String> = std::iter::once("a".to_string())
            .chain((0..).map(|i| format!("b{i}")))
            .filter(|key| KeyHash::of(key.as_bytes()).recent() == place)
            .take(WAYS + 2)
            .collect();
        let made: Vec<usize> = keys
            .iter()
            .map(|key| run.find_or_create(&machine, &sinks, key, &at))
            .collect();
        assert_eq!(
            made,
            (filler.len()..filler.len() + keys.len()).collect::<Vec<_>>()
        );
        for _ in 0..3 {
            for (key, &index) in keys.iter().zip(&made).rev() {
                assert_eq!(run.find(key), Some(index));
                assert_eq!(run.find_or_create(&machine, &sinks, key, &at), index);
                assert_eq!(run.key(index), Some(key.as_str()));
            }
        }
        for (index, key) in filler.iter().enumerate() {
            assert_eq!(run.find_or_create(&machine, &sinks, key, &at), index);
        }
        assert_eq!(run.len(), filler.len() + keys.len());
    }
}
