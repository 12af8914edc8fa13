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

use super::Out;
use super::shared::Pairer;

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
        }
    }
}

impl<T: Thread> Threads<T> {
    /// Adds a thread; its index.
    pub fn push(&mut self, thread: T) -> usize {
        self.threads.push(thread);
        self.last.push(0);
        self.threads.len() - 1
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

    /// After the element at `position` was read into thread `touched` (if any): hands
    /// on what is final.
    pub fn after(&mut self, touched: Option<usize>, position: usize, out: &mut Out) {
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
