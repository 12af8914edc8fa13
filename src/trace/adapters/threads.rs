//! The threads of a log read one element at a time (a Claude Code log's sessions and
//! sidechains, a Codex rollout's sessions), handed on thread by thread in the order
//! they start, as reading the whole log gives them.
//!
//! The first thread not yet finished, the head, streams: its records are handed on
//! once final ([`Pairer::flush_in`]). A later thread is held until every thread
//! before it is finished, which is known at the end of the log, or, when a first pass
//! over the file found where each thread's last element is ([`Threads::ends`]), at
//! that element: a file of sessions one after the other then holds only the session
//! being read. A thread finished there has handed on every record of its own, so its
//! trace has ended, which the stream says ([`Threads::take_ended`]) for the checker to
//! end it at once.
//!
//! A thread whose records wait for the answer of a call that a later result may give
//! ([`Threads::waits_unknowing`]) has the stream look ahead, read from a file: a copy
//! of the log's reader ([`Threads::naming`]) reads the rest of the log into the threads
//! this one would and says what their results name ([`Threads::take_named`]), which
//! every thread learns, those that start later as they start ([`Threads::expect`]).

use std::rc::Rc;

use super::Out;
use super::shared::{Answers, Named, Pairer};

/// One thread of a log: its name (its trace within the transcript) and its pairing.
pub(super) trait Thread {
    fn name(&self) -> Option<&str>;
    fn pairer(&mut self) -> &mut Pairer;
}

pub(super) struct Threads<T> {
    threads: Vec<T>,
    /// The first thread not finished yet: the one that streams.
    head: usize,
    /// Where each thread's last element is (its document's index), when a first pass
    /// found it; without it every thread but the first ends with the log.
    ends: Option<Vec<usize>>,
    /// In a first pass, where each thread's last element seen so far is.
    last: Vec<usize>,
    /// Whether this is a first pass, whose records are only counted: every thread
    /// hands on what is final, so that none holds much.
    survey: bool,
    /// The names of the threads finished at their last element since
    /// [`Threads::take_ended`] was last called.
    ended: Vec<Option<String>>,
    /// The thread the last element was read into, if any.
    touched: Option<usize>,
    /// What the results of the threads that start after a look ahead name, which each
    /// learns as it starts ([`Threads::expect`]): the first is the thread at index
    /// `coming_from`.
    coming: Vec<Option<Answers>>,
    coming_from: usize,
    /// Whether this is a look ahead's copy ([`Threads::naming`]), whose threads note
    /// what their results name from their first.
    naming: bool,
}

impl<T> Default for Threads<T> {
    fn default() -> Self {
        Threads {
            threads: Vec::new(),
            head: 0,
            ends: None,
            last: Vec::new(),
            survey: false,
            ended: Vec::new(),
            touched: None,
            coming: Vec::new(),
            coming_from: 0,
            naming: false,
        }
    }
}

impl<T: Thread> Threads<T> {
    /// Adds a thread; its index.
    pub fn push(&mut self, mut thread: T) -> usize {
        let index = self.threads.len();
        let pairer = thread.pairer();
        if self.naming {
            *pairer = pairer.naming();
        } else if let Some(answers) = index
            .checked_sub(self.coming_from)
            .and_then(|at| self.coming.get_mut(at))
            .and_then(Option::take)
        {
            pairer.learn_answers(Rc::new(answers));
        }
        self.threads.push(thread);
        self.last.push(0);
        index
    }

    /// Keeps what a look ahead learned of the threads that start after it, `coming`
    /// (in the order they start), for each to learn as it starts: the rest of the log
    /// is then read ahead once, not once for each of them.
    pub fn expect(&mut self, coming: Vec<Answers>) {
        self.coming_from = self.threads.len();
        self.coming = coming.into_iter().map(Some).collect();
    }

    pub fn get_mut(&mut self, index: usize) -> &mut T {
        &mut self.threads[index]
    }

    /// Threads that read a record: traces of the log, whenever their records are
    /// handed on.
    pub fn traces(&mut self) -> usize {
        self.threads
            .iter_mut()
            .map(|thread| thread.pairer().recorded())
            .filter(|&recorded| recorded)
            .count()
    }

    /// Makes this a first pass over the log ([`Threads::ends`]).
    pub fn survey(&mut self) {
        self.survey = true;
    }

    /// Where each thread's last element is, after a first pass.
    pub fn ends(&self) -> Vec<usize> {
        self.last.clone()
    }

    /// Tells where each thread's last element is ([`Threads::ends`] of a first pass
    /// over the same log).
    pub fn set_ends(&mut self, ends: Vec<usize>) {
        self.ends = Some(ends);
    }

    /// Whether the thread the last element was read into, or the head, holds records
    /// for the answer of a call that a look ahead could tell
    /// ([`Pairer::waits_unknowing`]): a thread comes to wait so only when an element is
    /// read into it, or when it becomes the head and hands on what it held.
    pub fn waits_unknowing(&mut self) -> bool {
        let head = self.head;
        let mut waits = |index: usize| {
            self.threads
                .get_mut(index)
                .is_some_and(|thread| thread.pairer().waits_unknowing())
        };
        self.touched.is_some_and(&mut waits) || waits(head)
    }

    /// Each thread's pairer, in the order the threads started.
    pub fn pairers(&mut self) -> impl Iterator<Item = &mut Pairer> {
        self.threads.iter_mut().map(T::pairer)
    }

    /// For a look ahead: the threads as `naming` copies each (its pairer noting what its
    /// results name, [`Pairer::naming`]), to read the rest of the log into as these
    /// would be ([`Threads::take_named`]).
    pub fn naming(&self, naming: impl Fn(&T) -> T) -> Threads<T> {
        let threads: Vec<T> = self.threads.iter().map(naming).collect();
        Threads {
            last: vec![0; threads.len()],
            threads,
            naming: true,
            ..Threads::default()
        }
    }

    /// For a look ahead, after an element was read into thread `touched` (if any): the
    /// thread, and what its results read since named; its pairer is made anew, so that
    /// it holds nothing.
    pub fn take_named(&mut self, touched: Option<usize>) -> Option<(usize, Vec<Named>)> {
        let index = touched?;
        let pairer = self.threads[index].pairer();
        let named = pairer.take_named();
        *pairer = pairer.naming();
        Some((index, named))
    }

    /// After the element at `position` was read into thread `touched` (if any): hands
    /// on what is final.
    pub fn after(&mut self, touched: Option<usize>, position: usize, out: &mut Out) {
        self.touched = touched;
        if let Some(index) = touched {
            self.last[index] = position;
        }
        if self.survey {
            if let Some(index) = touched {
                let thread = &mut self.threads[index];
                let name = thread.name().map(str::to_string);
                thread.pairer().flush_in(name.as_deref(), out);
            }
            return;
        }
        if let Some(ends) = &self.ends {
            // Threads that had their last element are finished, and the next streams.
            while self.head < self.threads.len()
                && ends.get(self.head).is_none_or(|&end| end <= position)
            {
                let thread = &mut self.threads[self.head];
                let name = thread.name().map(str::to_string);
                let pairer = std::mem::replace(thread.pairer(), Pairer::new(""));
                // A thread that read no record has no trace to end (and its name may be
                // another's, which goes on).
                if pairer.recorded() {
                    self.ended.push(name.clone());
                }
                pairer.finish_in(name.as_deref(), out);
                self.head += 1;
            }
        }
        if let Some(head) = self.threads.get_mut(self.head) {
            let name = head.name().map(str::to_string);
            head.pairer().flush_in(name.as_deref(), out);
        }
        // What another thread holds is handed on after its element is gone (a thread
        // before the head only when the file changed since the first pass).
        if let Some(index) = touched.filter(|&index| index != self.head) {
            self.threads[index].pairer().pin_new(out);
        }
    }

    /// The names of the threads finished before the end of the log since the last
    /// call, each once: every record of theirs has been handed on, and no later
    /// element can add one (unless the file changed since the first pass), so their
    /// traces have ended.
    pub fn take_ended(&mut self) -> Vec<Option<String>> {
        std::mem::take(&mut self.ended)
    }

    /// Hands on the rest, thread by thread. A thread finished before holds nothing,
    /// unless the file changed since the first pass: then what it read since is
    /// handed on here rather than lost.
    pub fn finish(self, out: &mut Out) {
        for mut thread in self.threads {
            let name = thread.name().map(str::to_string);
            let pairer = std::mem::replace(thread.pairer(), Pairer::new(""));
            pairer.finish_in(name.as_deref(), out);
        }
    }
}
